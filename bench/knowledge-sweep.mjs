// `npm run build && node bench/knowledge-sweep.mjs [--shared]`: the sweep behind the fusion
// constants of hybrid search (src/knowledge/search-knowledge.ts, docs/knowledge.md). Starts the
// real `serve` (embedded SQLite), ingests the labelled question set's corpus, reads each
// question's keyword and vector lists (100 deep) from the server's SQLite file in this process,
// and fuses them here for every k, vector weight and list depth, printing recall@5 and MRR@5
// beside keyword-only search. `--shared` first ingests the ingest benchmark's 420 synthetic
// documents into other bases, as bench:knowledge does before its quality section: FTS5's bm25
// statistics are the whole index's, so keyword ranks depend on what else is indexed.
import path from 'node:path';
import { startServe } from './lib/serve-process.mjs';
import { readCorpus, syntheticDocuments } from './knowledge/corpus.mjs';
import { QUESTIONS } from './knowledge/questions.mjs';
import { api, createBase, ingestAll } from './knowledge/client.mjs';

const dist = new URL('../dist/', import.meta.url).pathname;
const shared = process.argv.includes('--shared');

const server = await startServe({ SWITCHYARD_API_RATE_LIMIT: '0' });
const client = api(server);
const ingestBase = async (name, documents) => {
  const id = await createBase(client, name);
  await ingestAll(client, id, documents);
  return id;
};

let lists;
let bySeq;
try {
  if (shared) {
    await ingestBase('Warm-up', syntheticDocuments(20, { seed: 7 }));
    await ingestBase('Ingest', syntheticDocuments(400, { seed: 11 }));
  }
  const baseId = await ingestBase(
    'Project docs',
    readCorpus().map((doc) => ({ title: doc.file, content: doc.text })),
  );
  const { openSqlite } = await import(path.join(dist, 'db/dialect/sqlite.js'));
  const { openSearchIndexes } = await import(path.join(dist, 'knowledge/search-indexes.js'));
  const { keywordTerms } = await import(path.join(dist, 'knowledge/search-knowledge.js'));
  const { builtinEmbed } = await import(path.join(dist, 'ai/builtin-embedder.js'));
  const handle = openSqlite(path.join(server.dataDir, 'switchyard.db'));
  try {
    // Lists only, one question at a time: the scans on this connection (no reader thread).
    const indexes = await openSearchIndexes(handle, { vectorReader: false });
    const base = await handle.db.selectFrom('knowledge_bases').selectAll().where('id', '=', baseId).executeTakeFirstOrThrow();
    const chunks = await handle.db
      .selectFrom('knowledge_chunks as c')
      .innerJoin('knowledge_documents as d', 'd.id', 'c.document_id')
      .select(['c.seq', 'd.title', 'c.text'])
      .where('c.knowledge_base_id', '=', baseId)
      .where('c.live', '=', 1)
      .execute();
    bySeq = new Map(chunks.map((chunk) => [Number(chunk.seq), chunk]));
    lists = [];
    for (const item of QUESTIONS) {
      const keyword = await indexes.keyword(handle.db, baseId, keywordTerms(item.question), 100, null);
      const vector = await indexes.nearest(handle.db, baseId, base.index_dimensions, builtinEmbed(item.question), 100, null);
      lists.push({ item, keyword: keyword.map((hit) => hit.seq), vector: vector.map((hit) => hit.seq) });
    }
  } finally {
    await handle.close();
  }
} finally {
  await client.close();
  await server.stop();
}

const relevant = (item, seq) => {
  const chunk = bySeq.get(seq);
  return chunk !== undefined && chunk.title === item.file && chunk.text.includes(item.answer);
};
function score(top) {
  let hits = 0;
  let reciprocal = 0;
  for (const [i, { item }] of lists.entries()) {
    const rank = top(i)
      .slice(0, 5)
      .findIndex((seq) => relevant(item, seq));
    if (rank >= 0) {
      hits += 1;
      reciprocal += 1 / (rank + 1);
    }
  }
  return { recall: hits / lists.length, mrr: reciprocal / lists.length };
}
const fused =
  (k, weight, depth, vectorDepth = depth) =>
  (i) => {
    const scores = new Map();
    const add = (seqs, w, d) => seqs.slice(0, d).forEach((seq, rank) => scores.set(seq, (scores.get(seq) ?? 0) + w / (k + rank + 1)));
    add(lists[i].keyword, 1, depth);
    add(lists[i].vector, weight, vectorDepth);
    return [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([seq]) => seq);
  };
const show = (label, { recall, mrr }) =>
  console.log(`${label.padEnd(24)} recall@5 ${(recall * 100).toFixed(1).padStart(5)}%  MRR@5 ${mrr.toFixed(3)}`);
console.log(`${QUESTIONS.length} questions, ${bySeq.size} chunks in the base${shared ? ', other bases in the index' : ''}`);
show(
  'keyword only',
  score((i) => lists[i].keyword),
);
show(
  'vector only',
  score((i) => lists[i].vector),
);
for (const k of [1, 2, 5, 10, 20, 60])
  for (const weight of [1, 0.7, 0.5, 0.4, 0.3, 0.2])
    for (const depth of [10, 20, 50, 100]) show(`k ${k}, weight ${weight}, depth ${depth}`, score(fused(k, weight, depth)));
// The vector list shorter than the keyword list (its depth is most of a vector search's cost).
for (const k of [1, 2, 5])
  for (const vectorDepth of [10, 20, 30, 50])
    show(`k ${k}, weight 0.2, depth 50, vector depth ${vectorDepth}`, score(fused(k, 0.2, 50, vectorDepth)));
