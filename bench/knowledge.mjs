// `npm run bench:knowledge`: the knowledge-base benchmarks. Builds nothing itself (the npm script
// runs `npm run build` first). Starts the real `node dist/main.js serve` as a child (embedded
// SQLite, defaults but the API rate limit, which is off) and measures over its HTTP API:
//   1. ingest throughput with the built-in embedder (chunks/s, documents posted to ready);
//   2. retrieval quality on the labelled question set (recall@5 and MRR for keyword, vector, hybrid);
//   3. search latency at 100,000 chunks (hybrid and vector p50/p99; keyword for reference), plus an
//      in-process row (the same search function on the server's SQLite file, no HTTP);
//   4. (informational) the same latency on PostgreSQL with the exact vector scan, when
//      BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres) is reachable.
// Writes bench/results/knowledge.{md,json}. BENCH_CHUNKS (default 100000) and BENCH_QUERIES
// (default 1000) scale section 3; BENCH_ONLY=1,2 runs some sections (results then not written).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { startServe } from './lib/serve-process.mjs';
import fs from 'node:fs';
import { machineFacts } from './lib/machine.mjs';
import { summary } from './lib/stats.mjs';
import { createSections } from './lib/sections.mjs';
import { readCorpus, syntheticDocuments } from './knowledge/corpus.mjs';
import { QUESTIONS } from './knowledge/questions.mjs';
import { api, createBase, ingestAll } from './knowledge/client.mjs';
import { writeKnowledgeReport } from './lib/knowledge-report.mjs';
import { postgresDatabase } from './knowledge/postgres.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const whole = (name, fallback) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number`);
  return value;
};
const settings = {
  date: new Date().toISOString(),
  ingestDocuments: whole('BENCH_INGEST_DOCS', 400),
  searchChunks: whole('BENCH_CHUNKS', 100_000),
  searchChunkSize: 128,
  queries: whole('BENCH_QUERIES', 1000),
  /** The exact scan on PostgreSQL takes seconds a search at 100,000 chunks: fewer searches there. */
  pgQueries: whole('BENCH_PG_QUERIES', 20),
  concurrency: 4,
};
const machine = machineFacts();
const bench = createSections();

/** CPU seconds (user + system) a process has used, from /proc (Linux; null elsewhere). */
function cpuSeconds(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

async function measureIngest(server) {
  const client = api(server, { connections: settings.concurrency });
  try {
    const baseId = await createBase(client, 'Ingest');
    // Warm-up: the tokenizer's ranks load and the JIT settle on a few documents first.
    await ingestAll(client, baseId, syntheticDocuments(20, { seed: 7 }), { concurrency: settings.concurrency });
    const before = (await client.call('GET', `/api/v1/knowledge-bases/${baseId}`)).data.attributes.chunk_count;
    const cpuBefore = cpuSeconds(server.pid);
    const result = await ingestAll(client, baseId, syntheticDocuments(settings.ingestDocuments, { seed: 11 }), {
      concurrency: settings.concurrency,
      log: console.log,
    });
    const cpuAfter = cpuSeconds(server.pid);
    const chunks = result.chunks - before;
    const rate = chunks / result.seconds;
    // On a shared machine the wall clock counts other tenants' work too; the server's own CPU time does not.
    const serverCpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    const perCpuSecond = serverCpu ? chunks / serverCpu : null;
    console.log(
      `  ${chunks} chunks of ${settings.ingestDocuments} documents in ${result.seconds.toFixed(2)} s: ${Math.round(rate)} chunks/s${serverCpu ? `; server CPU ${serverCpu.toFixed(2)} s: ${Math.round(perCpuSecond)} chunks per CPU-second` : ''}`,
    );
    return {
      rows: [
        {
          benchmark: 'Ingest, built-in embedder, SQLite (HTTP, posted to ready)',
          goal: '>= 2,000 chunks/s',
          measured: `${Math.round(rate).toLocaleString('en-US')} chunks/s`,
          verdict: rate >= 2000 ? 'PASS' : 'FAIL',
        },
        ...(perCpuSecond
          ? [
              {
                benchmark: "Ingest, the same run per second of the server's own CPU time",
                goal: '',
                measured: `${Math.round(perCpuSecond).toLocaleString('en-US')} chunks per CPU-second`,
                verdict: 'INFO',
              },
            ]
          : []),
      ],
      details: [
        `${settings.ingestDocuments} markdown documents (sections of the project's docs, default chunk size 512 / overlap 64) posted ${settings.concurrency} at a time to \`POST /knowledge-bases/:id/documents\`; clock stops when the last is \`ready\` (polled every 50 ms).`,
        `${chunks.toLocaleString('en-US')} chunks in ${result.seconds.toFixed(2)} s (posting took ${result.postSeconds.toFixed(2)} s of it): ${Math.round(rate).toLocaleString('en-US')} chunks/s.`,
        ...(serverCpu
          ? [
              `The server process used ${serverCpu.toFixed(2)} s of CPU (user + system, /proc/<pid>/stat) meanwhile: ${Math.round(perCpuSecond).toLocaleString('en-US')} chunks per CPU-second, what one free core would ingest; the wall-clock rate also counts the benchmark client and the machine's other tenants.`,
            ]
          : []),
      ],
      raw: { chunks, ...result, serverCpuSeconds: serverCpu },
    };
  } finally {
    await client.close();
  }
}

async function measureQuality(server) {
  const client = api(server, { connections: settings.concurrency });
  try {
    const baseId = await createBase(client, 'Project docs');
    await ingestAll(
      client,
      baseId,
      readCorpus().map((doc) => ({ title: doc.file, content: doc.text })),
      { concurrency: settings.concurrency },
    );
    const scores = {};
    const misses = {};
    for (const mode of ['keyword', 'vector', 'hybrid']) {
      let hits = 0;
      let reciprocal = 0;
      misses[mode] = [];
      for (const item of QUESTIONS) {
        const { results } = await client.call('POST', `/api/v1/knowledge-bases/${baseId}/search`, {
          data: { query: item.question, mode, top_k: 5 },
        });
        const rank = results.findIndex((r) => r.title === item.file && r.text.includes(item.answer));
        if (rank >= 0) {
          hits += 1;
          reciprocal += 1 / (rank + 1);
        } else misses[mode].push(item.question);
      }
      scores[mode] = { recallAt5: hits / QUESTIONS.length, mrrAt5: reciprocal / QUESTIONS.length };
      console.log(`  ${mode}: recall@5 ${(scores[mode].recallAt5 * 100).toFixed(1)}%, MRR@5 ${scores[mode].mrrAt5.toFixed(3)}`);
    }
    // Every label must be findable at all, or the question set is wrong.
    const unanswerable = [];
    for (const item of QUESTIONS) {
      const { results } = await client.call('POST', `/api/v1/knowledge-bases/${baseId}/search`, {
        data: { query: item.answer, mode: 'keyword', top_k: 50 },
      });
      if (!results.some((r) => r.title === item.file && r.text.includes(item.answer))) unanswerable.push(item.question);
    }
    if (unanswerable.length > 0) throw new Error(`labels that match no chunk: ${unanswerable.join(' | ')}`);
    const pct = (value) => `${(value * 100).toFixed(1)}%`;
    return {
      rows: ['keyword', 'vector', 'hybrid'].map((mode) => ({
        benchmark: `Retrieval quality, ${mode}${mode === 'vector' ? ' (built-in embedder)' : ''}`,
        goal: 'reported',
        measured: `recall@5 ${pct(scores[mode].recallAt5)}, MRR@5 ${scores[mode].mrrAt5.toFixed(3)}`,
        verdict: 'INFO',
      })),
      details: [
        `${QUESTIONS.length} questions about the project's documentation (bench/knowledge/questions.mjs), asked of a base holding ${readCorpus().length} files (${readCorpus()
          .map((d) => d.file)
          .join(', ')}) at the default chunking.`,
        'A result is relevant when it comes from the labelled file and contains the labelled passage; recall@5 counts questions with a relevant result in the top 5, MRR@5 averages 1/rank of the first one.',
        ...['keyword', 'vector', 'hybrid'].map(
          (mode) => `${mode} missed ${misses[mode].length}: ${misses[mode].map((q) => `"${q}"`).join('; ') || 'none'}.`,
        ),
      ],
      raw: { scores, misses },
    };
  } finally {
    await client.close();
  }
}

/** Seeds a base to `settings.searchChunks` chunks over HTTP, then times searches one after another. */
async function measureLatency(server, label, { inProcess = false, dialect = 'sqlite', queries = settings.queries } = {}) {
  const client = api(server);
  try {
    const baseId = await createBase(client, 'Large', { chunk_size: settings.searchChunkSize, chunk_overlap: 16 });
    const perDocument = 13;
    let seeded = 0;
    let seed = 1000;
    const seedStarted = performance.now();
    while (seeded < settings.searchChunks) {
      const batch = Math.max(10, Math.ceil((settings.searchChunks - seeded) / perDocument));
      const result = await ingestAll(
        client,
        baseId,
        syntheticDocuments(Math.min(batch, 2000), { seed: seed++, sections: 3 }).map((d) => ({ ...d, title: `${d.title}-${seed}` })),
        { concurrency: settings.concurrency },
      );
      seeded = result.chunks;
      console.log(
        `  ${label}: ${seeded.toLocaleString('en-US')} chunks seeded (${((performance.now() - seedStarted) / 1000).toFixed(0)} s)`,
      );
    }
    const questions = QUESTIONS.map((q) => q.question);
    const timings = {};
    for (const mode of ['hybrid', 'vector', 'keyword']) {
      for (let i = 0; i < Math.min(10, queries); i++)
        await client.call('POST', `/api/v1/knowledge-bases/${baseId}/search`, { data: { query: questions[i % questions.length], mode } });
      const ms = [];
      for (let i = 0; i < queries; i++) {
        const t0 = performance.now();
        await client.call('POST', `/api/v1/knowledge-bases/${baseId}/search`, {
          data: { query: questions[i % questions.length], mode, top_k: 5 },
        });
        ms.push(performance.now() - t0);
      }
      timings[mode] = summary(ms, 3);
      console.log(`  ${label} ${mode}: p50 ${timings[mode].p50} ms, p99 ${timings[mode].p99} ms`);
    }
    let inProcessTimings = null;
    if (inProcess) inProcessTimings = await measureInProcess(server, baseId, questions);
    return { baseId, chunks: seeded, seedSeconds: (performance.now() - seedStarted) / 1000, timings, inProcessTimings, dialect };
  } finally {
    await client.close();
  }
}

/** The same search function, in this process, on the server's SQLite file (WAL: reads beside the server). */
async function measureInProcess(server, baseId, questions) {
  const { openSqlite } = await import(path.join(here, '../dist/db/dialect/sqlite.js'));
  const { openSearchIndexes } = await import(path.join(here, '../dist/knowledge/search-indexes.js'));
  const { searchKnowledge } = await import(path.join(here, '../dist/knowledge/search-knowledge.js'));
  const { ConnectionResolver } = await import(path.join(here, '../dist/ai/connection-resolver.js'));
  const handle = openSqlite(path.join(server.dataDir, 'switchyard.db'));
  try {
    const indexes = await openSearchIndexes(handle);
    // The server's vector reader thread is up after its warm-up searches; this one is started here.
    await indexes.ready?.();
    const base = await handle.db.selectFrom('knowledge_bases').selectAll().where('id', '=', baseId).executeTakeFirstOrThrow();
    const context = {
      db: handle.db,
      dialect: 'sqlite',
      indexes,
      resolver: new ConnectionResolver(handle.db, 'unused-unused-unused-unused-unused'),
      httpAllow: [],
    };
    const timings = {};
    for (const mode of ['hybrid', 'vector']) {
      for (let i = 0; i < 10; i++)
        await searchKnowledge(context, base, { query: questions[i % questions.length], topK: 5, mode, filter: null });
      const ms = [];
      for (let i = 0; i < settings.queries; i++) {
        const t0 = performance.now();
        await searchKnowledge(context, base, { query: questions[i % questions.length], topK: 5, mode, filter: null });
        ms.push(performance.now() - t0);
      }
      timings[mode] = summary(ms, 3);
      console.log(`  in-process ${mode}: p50 ${timings[mode].p50} ms, p99 ${timings[mode].p99} ms`);
    }
    // The approximate index (IVF lists) against the exact scan, on the question set's queries.
    const { exactNearest } = await import(path.join(here, '../dist/knowledge/search-sql.js'));
    const { builtinEmbed } = await import(path.join(here, '../dist/ai/builtin-embedder.js'));
    let found = 0;
    let wanted = 0;
    for (const question of questions) {
      const query = builtinEmbed(question);
      const exact = (await exactNearest(handle.db, 'sqlite', baseId, query, 5, null)).map((hit) => hit.seq);
      const approximate = new Set((await indexes.nearest(handle.db, baseId, base.index_dimensions, query, 5, null)).map((hit) => hit.seq));
      wanted += exact.length;
      found += exact.filter((seq) => approximate.has(seq)).length;
    }
    timings.ivfRecallAt5 = found / wanted;
    await indexes.close?.();
    console.log(`  IVF recall@5 against the exact scan: ${(timings.ivfRecallAt5 * 100).toFixed(1)}%`);
    return timings;
  } finally {
    await handle.close();
  }
}

function latencyRows(result, prefix, goals) {
  const row = (mode, goal, pass) => ({
    benchmark: `${prefix}, HTTP, ${mode} (${result.chunks.toLocaleString('en-US')} chunks)`,
    goal,
    measured: `p50 ${result.timings[mode].p50} ms, p99 ${result.timings[mode].p99} ms`,
    verdict: goal ? (pass ? 'PASS' : 'FAIL') : 'INFO',
  });
  const rows = [
    row('hybrid', goals ? 'p99 <= 25 ms' : '', result.timings.hybrid.p99 <= 25),
    row('vector', goals ? 'p99 reported' : '', true),
    row('keyword', '', true),
  ];
  if (goals) rows[1].verdict = 'INFO';
  if (result.inProcessTimings) {
    for (const mode of ['hybrid', 'vector'])
      rows.push({
        benchmark: `${prefix}, in-process (no HTTP), ${mode}`,
        goal: '',
        measured: `p50 ${result.inProcessTimings[mode].p50} ms, p99 ${result.inProcessTimings[mode].p99} ms`,
        verdict: 'INFO',
      });
    if (result.inProcessTimings.ivfRecallAt5 !== undefined)
      rows.push({
        benchmark: `${prefix}, IVF lists (12 of 128 probed) recall@5 against the exact scan`,
        goal: '',
        measured: `${(result.inProcessTimings.ivfRecallAt5 * 100).toFixed(1)}% of the exact top 5`,
        verdict: 'INFO',
      });
  }
  return rows;
}

const { section, sections } = bench;
const server = await startServe({ SWITCHYARD_API_RATE_LIMIT: '0' });
try {
  await section(1, 'Ingest throughput', () => measureIngest(server));
  await section(2, 'Retrieval quality', () => measureQuality(server));
  await section(3, 'Search latency at 100,000 chunks (SQLite)', async () => {
    const result = await measureLatency(server, 'sqlite', { inProcess: true });
    return {
      rows: latencyRows(result, 'Search, SQLite (sqlite-vec, FTS5)', true),
      details: [
        `A base of ${result.chunks.toLocaleString('en-US')} chunks (chunk size ${settings.searchChunkSize} tokens) seeded over HTTP in ${result.seedSeconds.toFixed(0)} s; ${settings.queries} searches per mode, one after another on one keep-alive connection, after 10 warm-up searches; queries are the question set's, top_k 5.`,
        "HTTP rows time `POST /knowledge-bases/:id/search` from request to last byte (undici); the in-process rows call the same search function on the server's SQLite file from the benchmark process.",
        "Past 8,192 vectors a base's vectors are filed into 128 IVF lists (sqlite-vec partitions) and a vector search probes the 12 nearest (src/knowledge/ivf-lists.ts); the recall row compares its top 5 with an exact scan of the same base for the question set's queries.",
      ],
      raw: result,
    };
  });
} finally {
  await server.stop();
}

await section(4, 'Search latency on PostgreSQL (informational)', async () => {
  const database = await postgresDatabase(process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  if (!database)
    return {
      rows: [{ benchmark: 'Search, PostgreSQL', goal: '', measured: 'skipped: no PostgreSQL reachable (BENCH_PG_URL)', verdict: 'INFO' }],
      details: ['PostgreSQL was not reachable.'],
      raw: null,
    };
  const pg = await startServe({ SWITCHYARD_API_RATE_LIMIT: '0', DATABASE_URL: database.url });
  try {
    const mode = /vector search: (\S+)/.exec(pg.output())?.[1];
    const result = await measureLatency(pg, 'postgres', { dialect: 'postgres', queries: settings.pgQueries });
    return {
      rows: latencyRows(result, `Search, PostgreSQL (${mode}, tsvector)`, false),
      details: [
        `The same base and queries on PostgreSQL ${database.version} (vector search: ${mode}), ${settings.pgQueries} searches per mode; seeded in ${result.seedSeconds.toFixed(0)} s. No goal. ${mode === 'pgvector' ? "The server has pgvector (built from Debian's source package, as .ci/run does): vector search uses its HNSW index." : 'The server offers no pgvector: this is the exact scan in memory.'}`,
      ],
      raw: result,
    };
  } finally {
    await pg.stop();
    await database.drop();
  }
});

console.log('');
const rows = sections.flatMap((s) => s.rows);
for (const row of rows)
  console.log(`${row.verdict.padEnd(5)} ${row.benchmark}: ${row.goal ? `${row.goal} ` : ''}(measured ${row.measured})`);
if (bench.only) console.log('Results not written (BENCH_ONLY set).');
else {
  const written = writeKnowledgeReport(path.join(here, 'results'), {
    machine,
    machineAfter: machineFacts().loadAverage,
    settings,
    rows,
    sections: sections.map(({ number, title, details, raw }) => ({ number, title, details, raw })),
  });
  console.log(`\nWrote ${written.map((file) => path.relative(process.cwd(), file)).join(' and ')}`);
}
if (bench.failed) process.exitCode = 1;
