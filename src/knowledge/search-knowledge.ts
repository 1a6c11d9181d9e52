import type { Kysely } from 'kysely';
import type { DialectName } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';
import { BUILTIN_EMBEDDER_KEY, isStopWord, words } from '../ai/builtin-embedder.js';
import type { ConnectionResolver } from '../ai/connection-resolver.js';
import { parseEmbedderSpec, resolveEmbedder } from '../ai/embedder.js';
import type { KnowledgeBaseRow } from '../store/knowledge-base-repository.js';
import type { MetadataFilter, ScoredSeq, SearchIndexes } from './search-indexes.js';

export const SEARCH_MODES = ['hybrid', 'vector', 'keyword'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): a chunk's fused score is the sum
 * over the lists that found it of weight / (RRF_K + rank). The paper's k = 60 flattens ranks so
 * much that the 20th hit of the weaker list outweighs a chunk both lists rank 5th; measured on
 * the labelled question set (bench/results/knowledge.md), k = 60 put hybrid below keyword-only
 * search, and k = 1-5 with the built-in embedder's weight below kept it at keyword search's
 * recall (sweeps of k 1-60, depths 10-100 and weights 0.2-1 are in docs/knowledge.md).
 */
export const RRF_K = 5;
/**
 * The vector list's weight in the fusion (the keyword list's is 1): the built-in embedder hashes
 * words and finds wording more than meaning, so its ranks count for less; an embedding model
 * behind a connection ranks as well as keyword search or better and counts fully. 0.2 (was 0.7,
 * chosen on an earlier version of the question set's corpus): on the corpus as it is, every
 * weight of 0.3 or more put hybrid search below keyword search (recall@5 75-83% against 86.1%),
 * 0.2 matched keyword search's recall with a slightly higher MRR@5 at k 1, 2 and 5 and depths 50
 * and 100, with or without other bases in the index.
 */
export const BUILTIN_VECTOR_WEIGHT = 0.2;

export interface SearchRequest {
  query: string;
  topK: number;
  mode: SearchMode;
  filter: MetadataFilter | null;
}

export interface SearchResult {
  chunk_id: string;
  document_id: string;
  title: string;
  heading_path: string[];
  text: string;
  score: number;
}

export interface SearchContext {
  db: Kysely<Database>;
  dialect: DialectName;
  indexes: SearchIndexes;
  resolver: ConnectionResolver;
  httpAllow: readonly string[];
  nowMs?: () => number;
}

/** The words of a query worth matching: folded, stop words out, each once, at most 32. */
export function keywordTerms(query: string): string[] {
  return [...new Set(words(query).filter((word) => !isStopWord(word)))].slice(0, 32);
}

/** How many candidates each list contributes to the fusion. */
function candidates(topK: number): number {
  return Math.max(50, topK * 2);
}

export function fuse(lists: { hits: ScoredSeq[]; weight: number }[], topK: number): ScoredSeq[] {
  const scores = new Map<number, number>();
  for (const { hits, weight } of lists)
    hits.forEach((item, rank) => scores.set(item.seq, (scores.get(item.seq) ?? 0) + weight / (RRF_K + rank + 1)));
  return [...scores.entries()]
    .map(([seq, score]) => ({ seq, score }))
    .sort((a, b) => b.score - a.score || a.seq - b.seq)
    .slice(0, topK);
}

/**
 * Searches a base's live chunks: keyword (FTS5 bm25 / ts_rank), vector (cosine similarity to
 * the query embedded with the embedder of the live vectors), or hybrid (both, fused by
 * reciprocal rank). Scores are those of the mode: -bm25 or ts_rank, cosine, or the RRF sum.
 */
export async function searchKnowledge(context: SearchContext, base: KnowledgeBaseRow, request: SearchRequest): Promise<SearchResult[]> {
  const { db, indexes } = context;
  const wantKeyword = request.mode !== 'vector';
  const wantVector = request.mode !== 'keyword';
  const limit = request.mode === 'hybrid' ? candidates(request.topK) : request.topK;

  // The vector half first: on SQLite it goes to a thread of its own (vector-reader.ts) and runs
  // while this thread runs the keyword half.
  let vector: Promise<ScoredSeq[]> = Promise.resolve([]);
  if (wantVector && base.index_embedder && base.index_dimensions) {
    const embedder = resolveEmbedder(parseEmbedderSpec(base.index_embedder), {
      resolver: context.resolver,
      workspaceId: base.workspace_id,
      httpAllow: context.httpAllow,
      ...(context.nowMs ? { nowMs: context.nowMs } : {}),
    });
    const dimensions = base.index_dimensions;
    vector = embedder.embed([request.query]).then(([query]) => indexes.nearest(db, base.id, dimensions, query!, limit, request.filter));
  }
  const keyword = wantKeyword ? indexes.keyword(db, base.id, keywordTerms(request.query), limit, request.filter) : Promise.resolve([]);
  const [keywordHits, vectorHits] = await Promise.all([keyword, vector]);
  const vectorWeight = base.index_embedder_key === BUILTIN_EMBEDDER_KEY ? BUILTIN_VECTOR_WEIGHT : 1;
  const ranked =
    request.mode === 'hybrid'
      ? fuse(
          [
            { hits: keywordHits, weight: 1 },
            { hits: vectorHits, weight: vectorWeight },
          ],
          request.topK,
        )
      : (request.mode === 'keyword' ? keywordHits : vectorHits).slice(0, request.topK);
  return hydrate(db, base, ranked);
}

/** The chunks behind ranked seqs, in rank order; a chunk swapped out meanwhile is dropped. */
async function hydrate(db: Kysely<Database>, base: KnowledgeBaseRow, ranked: ScoredSeq[]): Promise<SearchResult[]> {
  if (ranked.length === 0) return [];
  const rows = await db
    .selectFrom('knowledge_chunks as c')
    .innerJoin('knowledge_documents as d', 'd.id', 'c.document_id')
    .select(['c.seq', 'c.id', 'c.document_id', 'd.title', 'c.heading_path', 'c.text'])
    .where('c.workspace_id', '=', base.workspace_id)
    .where('c.knowledge_base_id', '=', base.id)
    .where('c.live', '=', true)
    .where(
      'c.seq',
      'in',
      ranked.map((item) => item.seq),
    )
    .execute();
  const bySeq = new Map(rows.map((row) => [Number(row.seq), row]));
  const results: SearchResult[] = [];
  for (const item of ranked) {
    const row = bySeq.get(item.seq);
    if (!row) continue;
    results.push({
      chunk_id: row.id,
      document_id: row.document_id,
      title: row.title,
      heading_path: JSON.parse(row.heading_path) as string[],
      text: row.text,
      score: item.score,
    });
  }
  return results;
}
