import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DatabaseHandle, DialectName } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';
import { toStoredVector } from '../store/stored-vector.js';

/**
 * The search indexes over live chunks, per dialect:
 *
 * | | keyword | vector |
 * | --- | --- | --- |
 * | SQLite | FTS5 `knowledge_chunks_fts`, bm25 | sqlite-vec `vec0` table per dimension, partitioned by base |
 * | PostgreSQL + pgvector | `tsv` column, GIN, ts_rank | `knowledge_vectors_<dim>` with an HNSW index (cosine) |
 * | PostgreSQL without it | `tsv` column, GIN, ts_rank | exact scan of the chunks' `real[]` vectors |
 *
 * A metadata filter narrows the candidates first and scores them exactly (an approximate
 * index cannot filter on arbitrary metadata without losing results).
 * The pgvector path is not exercised by the test suite (the extension cannot be installed on
 * the machines this project is built on): it is kept to plain, documented pgvector SQL.
 */
export const VECTOR_MODES = ['sqlite-vec', 'pgvector', 'exact'] as const;
export type VectorMode = (typeof VECTOR_MODES)[number];

type Db = Kysely<Database> | Transaction<Database>;

export interface IndexedChunk {
  seq: number;
  /** Heading path and text: what keyword search matches. */
  body: string;
  embedding: Float32Array;
}

export interface ScoredSeq {
  seq: number;
  score: number;
}

/** Equality on metadata keys; values are JSON scalars. */
export type MetadataFilter = Record<string, string | number | boolean | null>;

export const METADATA_KEY = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

const vectorTable = (dimensions: number) => sql.table(`knowledge_vectors_${Math.trunc(dimensions)}`);

function metadataConditions(dialect: DialectName, filter: MetadataFilter | null): RawBuilder<unknown>[] {
  if (!filter) return [];
  return Object.entries(filter).map(([key, value]) => {
    if (!METADATA_KEY.test(key)) throw new Error(`invalid metadata key ${key}`);
    if (dialect === 'postgres') return sql`(d.metadata::jsonb -> ${key}) = ${JSON.stringify(value)}::jsonb`;
    const path = `$."${key}"`;
    if (value === null) return sql`json_type(d.metadata, ${path}) = 'null'`;
    if (typeof value === 'boolean') return sql`json_type(d.metadata, ${path}) = ${value ? 'true' : 'false'}`;
    if (typeof value === 'number') return sql`json_type(d.metadata, ${path}) in ('integer', 'real') and json_extract(d.metadata, ${path}) = ${value}`;
    return sql`json_type(d.metadata, ${path}) = 'text' and json_extract(d.metadata, ${path}) = ${value}`;
  });
}

const and = (conditions: RawBuilder<unknown>[]) => (conditions.length === 0 ? sql`` : sql` and ${sql.join(conditions, sql` and `)}`);

/** Terms of a keyword query as an FTS5 / tsquery disjunction (bm25 and ts_rank reward matching more of them). */
export function keywordQuery(dialect: DialectName, terms: string[]): string {
  return dialect === 'postgres' ? terms.join(' | ') : terms.map((term) => `"${term}"`).join(' OR ');
}

export interface SearchIndexes {
  readonly vectorMode: VectorMode;
  /** Makes chunks searchable; inside the transaction that flips them live. */
  add(trx: Transaction<Database>, baseId: string, dimensions: number, chunks: IndexedChunk[]): Promise<void>;
  /** Takes chunks out of the indexes; inside the transaction that deletes them or replaces them. */
  remove(trx: Transaction<Database>, dimensions: number | null, seqs: number[]): Promise<void>;
  /** Replaces a base's vectors (a re-embedding's swap); the text index is unchanged. */
  replaceVectors(trx: Transaction<Database>, baseId: string, oldDimensions: number | null, seqs: number[], dimensions: number, vectors: Float32Array[]): Promise<void>;
  /** The base's live chunks nearest to `query` (scores: cosine similarity), best first. */
  nearest(db: Db, baseId: string, dimensions: number, query: Float32Array, k: number, filter: MetadataFilter | null): Promise<ScoredSeq[]>;
  /** The base's live chunks matching any term, best first (scores: -bm25 or ts_rank). */
  keyword(db: Db, baseId: string, terms: string[], k: number, filter: MetadataFilter | null): Promise<ScoredSeq[]>;
}

const BATCH = 200;

/** Exact cosine scores over the base's live chunks that pass the filter (vectors are L2-normalised). */
async function exactNearest(db: Db, dialect: DialectName, baseId: string, query: Float32Array, k: number, filter: MetadataFilter | null): Promise<ScoredSeq[]> {
  const conditions = metadataConditions(dialect, filter);
  const join = conditions.length > 0 ? sql`join knowledge_documents d on d.id = c.document_id` : sql``;
  const score =
    dialect === 'postgres'
      ? sql`(select sum(a * b) from unnest(c.embedding, ${toStoredVector('postgres', query)}::real[]) as t(a, b))`
      : sql`1 - vec_distance_cosine(c.embedding, ${toStoredVector('sqlite', query)})`;
  const live = dialect === 'postgres' ? sql`c.live` : sql`c.live = 1`;
  const result = await sql<{ seq: number | string; score: number }>`
    select c.seq, ${score} as score from knowledge_chunks c ${join}
    where c.knowledge_base_id = ${baseId} and ${live} and c.embedding is not null${and(conditions)}
    order by score desc, c.seq limit ${k}`.execute(db);
  return result.rows.map((row) => ({ seq: Number(row.seq), score: Number(row.score) }));
}

/**
 * The postings a keyword search may rank, at most (plus the rarest two terms whatever they
 * cost). FTS5 scores every row that matches any term before it can sort, so a query of common
 * words over 100,000 chunks scored tens of thousands of rows; the rarest terms carry nearly all
 * of bm25's weight (inverse document frequency), so common ones past the budget are dropped.
 */
export const KEYWORD_POSTINGS_BUDGET = 5000;

/** The query's words, rarest first by document frequency, cut at the postings budget (SQLite). */
async function rarestTerms(db: Db, terms: string[], state: { ready: boolean }): Promise<string[]> {
  if (terms.length <= 2) return terms;
  if (!state.ready) {
    // Stemming through an FTS5 table of the same tokenizer gives the exact terms the index holds.
    await sql`create virtual table if not exists temp.knowledge_query_terms using fts5(body, tokenize='porter unicode61 remove_diacritics 2')`.execute(db);
    await sql`create virtual table if not exists temp.knowledge_query_stems using fts5vocab(temp, knowledge_query_terms, instance)`.execute(db);
    await sql`create virtual table if not exists temp.knowledge_chunks_vocab using fts5vocab(main, knowledge_chunks_fts, row)`.execute(db);
    state.ready = true;
  }
  await sql`delete from temp.knowledge_query_terms`.execute(db);
  await sql`insert into temp.knowledge_query_terms (rowid, body) values ${sql.join(terms.map((term, i) => sql`(${i + 1}, ${term})`))}`.execute(db);
  const rows = await sql<{ doc: number; term: string; postings: number | null }>`
    select s.doc, s.term, v.doc as postings from temp.knowledge_query_stems s left join temp.knowledge_chunks_vocab v on v.term = s.term`.execute(db);
  const ranked = rows.rows.map((row) => ({ word: terms[Number(row.doc) - 1]!, postings: Number(row.postings ?? 0) })).sort((a, b) => a.postings - b.postings);
  const kept: string[] = [];
  let spent = 0;
  for (const { word, postings } of ranked) {
    if (kept.length >= 2 && spent + postings > KEYWORD_POSTINGS_BUDGET) break;
    kept.push(word);
    spent += postings;
  }
  return kept;
}

async function ftsKeyword(db: Db, baseId: string, allTerms: string[], k: number, filter: MetadataFilter | null, state: { ready: boolean }): Promise<ScoredSeq[]> {
  if (allTerms.length === 0) return [];
  const terms = await rarestTerms(db, allTerms, state);
  const conditions = metadataConditions('sqlite', filter);
  const join = conditions.length > 0 ? sql`join knowledge_chunks c on c.seq = f.rowid join knowledge_documents d on d.id = c.document_id` : sql``;
  const result = await sql<{ seq: number; score: number }>`
    select f.rowid as seq, -f.rank as score from knowledge_chunks_fts f ${join}
    where knowledge_chunks_fts match ${keywordQuery('sqlite', terms)} and f.kb = ${baseId}${and(conditions)}
    order by f.rank limit ${k}`.execute(db);
  return result.rows.map((row) => ({ seq: Number(row.seq), score: Number(row.score) }));
}

async function tsKeyword(db: Db, baseId: string, terms: string[], k: number, filter: MetadataFilter | null): Promise<ScoredSeq[]> {
  if (terms.length === 0) return [];
  const conditions = metadataConditions('postgres', filter);
  const join = conditions.length > 0 ? sql`join knowledge_documents d on d.id = c.document_id` : sql``;
  const result = await sql<{ seq: string; score: number }>`
    select c.seq, ts_rank(c.tsv, q) as score from knowledge_chunks c ${join}, to_tsquery('english', ${keywordQuery('postgres', terms)}) q
    where c.knowledge_base_id = ${baseId} and c.live and c.tsv @@ q${and(conditions)}
    order by score desc, c.seq limit ${k}`.execute(db);
  return result.rows.map((row) => ({ seq: Number(row.seq), score: Number(row.score) }));
}

function sqliteIndexes(): SearchIndexes {
  const ensured = new Set<number>();
  // The temp tables of rarestTerms live in this connection's temp schema.
  const termTables = { ready: false };
  const ensure = async (trx: Db, dimensions: number) => {
    if (ensured.has(dimensions)) return;
    await sql`create virtual table if not exists ${vectorTable(dimensions)} using vec0(knowledge_base_id text partition key, embedding float[${sql.raw(String(Math.trunc(dimensions)))}] distance_metric=cosine)`.execute(trx);
    ensured.add(dimensions);
  };
  // Multi-row inserts: building and running one statement per chunk cost more than the indexing itself.
  const insertVectors = async (trx: Db, baseId: string, dimensions: number, rows: { seq: number; embedding: Float32Array }[]) => {
    await ensure(trx, dimensions);
    for (let i = 0; i < rows.length; i += BATCH) {
      const values = rows.slice(i, i + BATCH).map((row) => sql`(cast(${row.seq} as integer), ${baseId}, ${toStoredVector('sqlite', row.embedding)})`);
      await sql`insert into ${vectorTable(dimensions)} (rowid, knowledge_base_id, embedding) values ${sql.join(values)}`.execute(trx);
    }
  };
  const deleteVectors = async (trx: Db, dimensions: number, seqs: number[]) => {
    await ensure(trx, dimensions);
    for (let i = 0; i < seqs.length; i += BATCH) {
      await sql`delete from ${vectorTable(dimensions)} where rowid in (${sql.join(seqs.slice(i, i + BATCH).map((seq) => sql`cast(${seq} as integer)`))})`.execute(trx);
    }
  };
  return {
    vectorMode: 'sqlite-vec',
    async add(trx, baseId, dimensions, chunks) {
      await insertVectors(trx, baseId, dimensions, chunks);
      for (let i = 0; i < chunks.length; i += BATCH) {
        const values = chunks.slice(i, i + BATCH).map((chunk) => sql`(cast(${chunk.seq} as integer), ${chunk.body}, ${baseId})`);
        await sql`insert into knowledge_chunks_fts (rowid, body, kb) values ${sql.join(values)}`.execute(trx);
      }
    },
    async remove(trx, dimensions, seqs) {
      if (seqs.length === 0) return;
      if (dimensions !== null) await deleteVectors(trx, dimensions, seqs);
      for (let i = 0; i < seqs.length; i += BATCH) {
        await sql`delete from knowledge_chunks_fts where rowid in (${sql.join(seqs.slice(i, i + BATCH).map((seq) => sql`cast(${seq} as integer)`))})`.execute(trx);
      }
    },
    async replaceVectors(trx, baseId, oldDimensions, seqs, dimensions, vectors) {
      if (oldDimensions !== null) await deleteVectors(trx, oldDimensions, seqs);
      await insertVectors(trx, baseId, dimensions, seqs.map((seq, i) => ({ seq, embedding: vectors[i]! })));
    },
    async nearest(db, baseId, dimensions, query, k, filter) {
      if (filter && Object.keys(filter).length > 0) return exactNearest(db, 'sqlite', baseId, query, k, filter);
      await ensure(db, dimensions);
      const result = await sql<{ seq: number; distance: number }>`
        select rowid as seq, distance from ${vectorTable(dimensions)}
        where embedding match ${toStoredVector('sqlite', query)} and k = ${k} and knowledge_base_id = ${baseId}`.execute(db);
      return result.rows.map((row) => ({ seq: Number(row.seq), score: 1 - Number(row.distance) }));
    },
    keyword: (db, baseId, terms, k, filter) => ftsKeyword(db, baseId, terms, k, filter, termTables),
  };
}

function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}

/** pgvector: a mirror table per dimension with an HNSW index; the chunks' `real[]` column stays the source. */
function pgvectorIndexes(): SearchIndexes {
  const ensured = new Set<number>();
  const ensure = async (db: Db, dimensions: number) => {
    if (ensured.has(dimensions)) return;
    const dims = sql.raw(String(Math.trunc(dimensions)));
    await sql`create table if not exists ${vectorTable(dimensions)} (seq bigint primary key references knowledge_chunks (seq) on delete cascade, knowledge_base_id text not null, embedding vector(${dims}) not null)`.execute(db);
    await sql`create index if not exists ${sql.raw(`knowledge_vectors_${Math.trunc(dimensions)}_hnsw`)} on ${vectorTable(dimensions)} using hnsw (embedding vector_cosine_ops)`.execute(db);
    ensured.add(dimensions);
  };
  const insertVectors = async (trx: Db, baseId: string, dimensions: number, rows: { seq: number; embedding: Float32Array }[]) => {
    await ensure(trx, dimensions);
    for (const row of rows) {
      await sql`insert into ${vectorTable(dimensions)} (seq, knowledge_base_id, embedding) values (${row.seq}, ${baseId}, ${vectorLiteral(row.embedding)}::vector)`.execute(trx);
    }
  };
  const deleteVectors = async (trx: Db, dimensions: number, seqs: number[]) => {
    await ensure(trx, dimensions);
    await sql`delete from ${vectorTable(dimensions)} where seq = any(${seqs}::bigint[])`.execute(trx);
  };
  return {
    vectorMode: 'pgvector',
    async add(trx, baseId, dimensions, chunks) {
      await insertVectors(trx, baseId, dimensions, chunks);
    },
    async remove(trx, dimensions, seqs) {
      if (dimensions !== null && seqs.length > 0) await deleteVectors(trx, dimensions, seqs);
    },
    async replaceVectors(trx, baseId, oldDimensions, seqs, dimensions, vectors) {
      if (oldDimensions !== null) await deleteVectors(trx, oldDimensions, seqs);
      await insertVectors(trx, baseId, dimensions, seqs.map((seq, i) => ({ seq, embedding: vectors[i]! })));
    },
    async nearest(db, baseId, dimensions, query, k, filter) {
      if (filter && Object.keys(filter).length > 0) return exactNearest(db, 'postgres', baseId, query, k, filter);
      await ensure(db, dimensions);
      const result = await sql<{ seq: string; distance: number }>`
        select seq, embedding <=> ${vectorLiteral(query)}::vector as distance from ${vectorTable(dimensions)}
        where knowledge_base_id = ${baseId} order by embedding <=> ${vectorLiteral(query)}::vector limit ${k}`.execute(db);
      return result.rows.map((row) => ({ seq: Number(row.seq), score: 1 - Number(row.distance) }));
    },
    keyword: tsKeyword,
  };
}

/** PostgreSQL without pgvector: the chunks' own `real[]` column and `live` flag are the index. */
function exactIndexes(): SearchIndexes {
  return {
    vectorMode: 'exact',
    add: async () => {},
    remove: async () => {},
    replaceVectors: async () => {},
    nearest: (db, baseId, _dimensions, query, k, filter) => exactNearest(db, 'postgres', baseId, query, k, filter),
    keyword: tsKeyword,
  };
}

/**
 * Chooses the vector index at start: sqlite-vec on SQLite; on PostgreSQL pgvector when the
 * extension is available (created here when the role may), else the exact scan.
 */
export async function openSearchIndexes(handle: Pick<DatabaseHandle, 'db' | 'dialect'>): Promise<SearchIndexes> {
  if (handle.dialect.name === 'sqlite') return sqliteIndexes();
  const available = await sql`select 1 from pg_available_extensions where name = 'vector'`.execute(handle.db);
  if (available.rows.length === 0) return exactIndexes();
  try {
    await sql`create extension if not exists vector`.execute(handle.db);
  } catch {
    // Installed on the server but not creatable by this role: the exact scan still answers.
  }
  const installed = await sql`select 1 from pg_extension where extname = 'vector'`.execute(handle.db);
  return installed.rows.length > 0 ? pgvectorIndexes() : exactIndexes();
}
