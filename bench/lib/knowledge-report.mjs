// Writes the knowledge benchmark's results: knowledge.md for people, knowledge.json with the raw numbers.
import fs from 'node:fs';
import path from 'node:path';

const cell = (text) => String(text).replaceAll('|', '\\|');

function markdown({ machine, machineAfter, settings, rows, sections }) {
  const table = [
    '| benchmark | goal | measured | result |',
    '| --- | --- | --- | --- |',
    ...rows.map((row) => `| ${cell(row.benchmark)} | ${cell(row.goal)} | ${cell(row.measured)} | ${row.verdict} |`),
  ];
  const details = sections.map((section) => `### ${section.title}\n\n${section.details.map((line) => `- ${line}`).join('\n')}`);
  return `# Knowledge benchmark

${table.join('\n')}

PASS/FAIL against the goal of the issue; INFO rows have no goal of their own; ERROR: the benchmark
could not measure (the command then fails).

## Details

${details.join('\n\n')}

Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}.
Load average (1/5/15 min) before the run ${machine.loadAverage.join(' / ')}, after it ${machineAfter.join(' / ')}: the machine is
shared with other engineers' builds and tests, so it was not quiet; latencies on a quiet machine are lower.
Run: ${settings.date}. Raw numbers: [knowledge.json](knowledge.json).

## Reading the results

- **Ingest** meets the goal, by a thin margin: at the default 512-token chunks each chunk is ~2 KB of
  text to tokenize, hash-embed, store (staged, then updated in place with its vector when it is
  swapped in) and index in FTS5 and sqlite-vec, and the event loop is the bottleneck (~93% busy
  during the run; V8's helper threads and the benchmark client share the second core). Every
  run with this code was at 2,000 or more, by a thin margin: fourteen runs of section 1 measured
  2,001-2,286 chunks/s (load 1.4-1.9), and the full runs before this file's 2,098, 2,244 and
  2,060 (server CPU 1.72-2.06 s; the corpus, made from the project's docs, grew from 3,391 to
  3,419 chunks as they were edited). Eight runs before the last change below measured
  1,935-2,160 (5 of 8).
  The second ingest row divides by the server process's own CPU time (all of its threads),
  which the other tenants of this VM do not inflate as much as the wall clock.
  What the round that met the goal changed (alternating runs against the code before each step):
  the benchmark's 4 posters each get a connection (before, they shared one and went one at a
  time; below), the built-in embedder scans words in place (~61 -> ~41 µs a chunk), staged
  chunks go to the embedding loop in memory instead of being read back, token counting keeps its
  counts in locals (chunking ~-10%), the loop reads a base once a pass, and the token-piece and
  word tables start small and grow (they held a few thousand keys in 2 MB and 0.8 MB of slots,
  so every look-up missed the caches; ~-2%): the server's CPU for the run went from ~2.11 to
  ~1.85 s, and the wall-clock rate from ~1,960 to ~2,050-2,290.
  Profiled (\`BENCH_SERVE_FLAGS="--cpu-prof --cpu-prof-dir=…"\`, then \`node
  bench/profile-summary.mjs FILE 40 FROM-TO\`), the event loop's time now goes to SQLite (~28%;
  FTS5 is the largest single cost, ~55 µs a chunk with its share of the commit), chunking (~19%),
  V8 (~14%: garbage collection, built-ins, regular expressions), the built-in embedder (~13%),
  HTTP and JSON (~9%) and Kysely (~5%). Tried and dropped with the corrected client: chunking and
  embedding on a worker thread (+1.5% wall clock, +13% CPU), and the loop's embedder alone on a
  thread (no change: the event loop stayed ~90% busy, its own work slower while the other thread
  ran); on this 2-core VM a second busy thread does not add throughput. docs/knowledge.md
  ("Ingest cost") has the details.
- **Search at 100,000 chunks** (SQLite): a hybrid search runs its two halves at once: the
  vector half (sqlite-vec's \`vec0\`, an exact scan of each probed IVF list: 12 of 128, ~10,700
  of 103,000 vectors, ~5 ms) on the vector reader thread, a second, read-only connection to the
  file (src/knowledge/vector-reader.ts), while the event loop runs the keyword half (FTS5 bm25
  over the query's rarest terms, ~2-10 ms by question); then the hydration of the fused top k.
  They ran one after the other until this round (SQLite calls block their thread): hybrid over
  HTTP measured p50 12.3-15.4 ms and p99 20.8-31.2 ms in five runs at load ~1-2 that day. With
  the reader, eleven runs the same morning (load 1.2-1.9, nothing else running) measured p50
  7.3-11.5 ms and p99 16.9-29.4 ms (200 searches a mode: 16.9, 18.6, 26.8 and 29.4 ms; 1,000:
  27.8, 22.4, 20.3, 20.3, 22.2, 26.7 and 20.0 ms): 7 of the 11 under the goal. This file's run,
  in the second round that day on another VM of the same kind (an Intel Xeon; the morning's was
  an AMD EPYC), measured p50 7.4 / p99 12.2 ms (the four full runs before it: 12.8, 13.2, 12.0 and 14.1 ms). The server's own timing of the searches (its access log, one run) put hybrid at p50 6.9
  / p99 17.1 ms with single searches of 25-46 ms scattered over the run, not tied to a question:
  pauses of the VM or of the server's garbage collector (a full collection of its ~90 MB heap
  took 22 ms), which the p99 of a run picks up or not. The slowest question itself (the keyword
  half of "How many nodes and edges can one workflow graph have?", ~9 ms) is ~11 ms hybrid. The
  reader uses the second core for the vector half: on a machine whose cores are all busy the
  two halves queue again.
- **PostgreSQL**: this file's run had pgvector (built from the source of Debian's package,
  as .ci/run now does), so its vector search is pgvector's HNSW index (p50 3.0-3.5 / p99 4.5-7.4 ms
  at ~103,000 chunks in three runs) and hybrid search is bound by its keyword side (below). Without pgvector the
  exact scan runs over a copy of the base's vectors in
  the server's memory (src/knowledge/search-indexes-exact.ts), loaded on the first search and
  refreshed from what changed (knowledge_bases.index_version); the first load falls in the
  warm-up searches, not the timed ones. The last two rounds did not change PostgreSQL's
  search: an exact vector search took p50 ~26-52 ms in their runs (~215 ms in an earlier run at load
  ~20), and hybrid search is bound by its keyword side, \`ts_rank\` over every row matching any
  query term (p50 ~156-227 ms; SQLite's rarest-terms pruning has no PostgreSQL counterpart yet). Seeding the base on
  PostgreSQL went from ~1,420 s to ~130 s with the ingest changes (claims on the partial index,
  batched swaps).
- **Quality**: hybrid search was below keyword search on this set after the corpus (the
  project's docs) was edited (recall@5 77.8-80.6% against 86.1%): the fusion constants had been
  chosen on the corpus as it was. A second sweep (\`node bench/knowledge-sweep.mjs [--shared]\`,
  docs/knowledge.md) lowered the built-in embedder's weight in the fusion from 0.7 to 0.2 (k = 5
  and list depth 50 stay): hybrid now matches keyword search's recall with a slightly higher
  MRR@5, alone in the index and beside the ingest section's bases (bm25's term statistics are the
  whole index's, so what else is indexed moves the keyword and hybrid rows a little). On these
  questions the built-in embedder (hashed words, word pairs and trigrams; no model) reorders
  keyword hits rather than finding new answers; a real embedding model through a connection is
  what makes hybrid and vector search find what keyword search misses.

## How it was measured

- \`npm run bench:knowledge\` compiles \`src/\` to \`dist/\` and runs \`bench/knowledge.mjs\`, which starts the real
  \`node dist/main.js serve\` as a child process on 127.0.0.1 (embedded SQLite in a fresh data dir, every
  setting at its default but \`SWITCHYARD_API_RATE_LIMIT=0\`, so the limit of 600 requests a minute does
  not throttle the benchmark; logs at the default \`info\`), reads the build token its first start
  prints, and drives it over HTTP with undici, without pipelining: ingest posts on 4 keep-alive
  connections at once (an undici \`Pool\`), searches go one after another on one connection. Until
  the second round of 2026-11-27 the ingest's 4 posters shared one undici \`Client\`, which is one
  connection taking one request at a time, so documents were in fact posted one at a time and the
  server idled between them while the client turned around (~15-20% of the wall clock).
- Documents are made from the project's own markdown (bench/knowledge/corpus.mjs, seeded, the same on
  every run). Ingest is timed from the first \`POST /documents\` to the moment the last document is
  \`ready\` (the background loop has embedded and swapped in its chunks), so it includes chunking,
  tokenizing, staging, embedding and indexing.
- Search latency: the base is seeded over the same API first; searches run one after another (no
  concurrency), so the figure is the latency of one search, not a throughput. Searches cycle
  through the 36 questions, each asked 27-28 times of the 1,000 a mode (200 until the round of
  the vector reader: a p99 of 200 samples is their second slowest, so one stall of the VM decided
  it; of 1,000 it is the tenth slowest).
- This round (docs/knowledge.md, "Ingest cost" and "Search"): chunking counts each unit once and
  joins the counts; swaps update staged rows in place through prepared statements, several
  documents in one transaction (the background loop gathers 20 ms of ingests); claims use the
  partial indexes; keyword search remembers term statistics between searches while the index is
  unchanged, ranks with bm25() rather than the rank column, skips the per-row base check for a
  base holding most of the index, and scores only a rare term's rows when bm25's bound allows.
  Seeding the 100,000-chunk base went from ~709 s to ~50-60 s on SQLite. The next round: the
  vector reader thread and the fusion weight (above).
- The PostgreSQL rows start a second server with \`DATABASE_URL\` on a fresh database of the local server.
`;
}

/** Writes knowledge.md and knowledge.json into `dir`; returns their paths. */
export function writeKnowledgeReport(dir, report) {
  fs.mkdirSync(dir, { recursive: true });
  const md = path.join(dir, 'knowledge.md');
  const json = path.join(dir, 'knowledge.json');
  fs.writeFileSync(md, markdown(report));
  fs.writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  return [md, json];
}
