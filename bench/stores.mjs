// `npm run bench:stores`: the stores benchmarks (issue 12's list). Builds nothing itself (the npm
// script runs `npm run build` first). For each database, SQLite always and PostgreSQL when
// BENCH_DATABASE_URL (or SWITCHYARD_TEST_DATABASE_URL) names a maintenance database (a fresh
// database is created for the run and dropped at its end), it starts the real `switchyard serve`
// (lib/spawn-serve.mjs: log level info, both rate limits counting but never refusing) and
// measures over its HTTP API, as a user's client would:
//   1. PUT /stores/:id/rows/:key of distinct new keys: latency at 1 connection, rows/s at 16,
//      beside bare Fastify's and bare node:http's hello world at 16 in the same run;
//   2. POST /stores/restore of an N-row NDJSON dump streamed from disk: rows/s and the server's
//      peak RSS growth;
//   3. GET /stores/:id/dump?format=ndjson of the same store, read as a stream: rows/s, RSS;
//   4. GET /stores/:id/rows?page[limit]=100 at N rows: p99 of the first page, and of page
//      BENCH_PAGE reached by following links.next;
//   5. webhook (immediate) -> save_to_store at 32 connections: executions completed per second,
//      beside the webhook -> code figure of bench/results/webhooks.json.
// BENCH_STORE_ROWS (default 1,000,000), BENCH_DURATION (5 s), BENCH_WARMUP (2 s), BENCH_PAGE
// (5,000). Writes bench/results/stores.{md,json} only at the default BENCH_STORE_ROWS (and
// without BENCH_ONLY or BENCH_CPU_PROF); every figure is printed as it is measured. BENCH_CPU_PROF=1
// runs serve under `node --cpu-prof` (profiles and summaries in bench/results/profiles/,
// `stores-<database>.cpuprofile`). See bench/README.md.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { fetch } from 'undici';
import pg from 'pg';
import { spawnServe, stopAll } from './lib/spawn-serve.mjs';
import { spawnServer } from './lib/spawn-server.mjs';
import { RATE_LIMITS } from './lib/engine-servers.mjs';
import { measure } from './lib/load.mjs';
import { latencyLoop } from './lib/latency-loop.mjs';
import { apiClient } from './lib/api-client.mjs';
import { immediateGraph, TRIGGER } from './lib/webhook-graphs.mjs';
import { machineFacts } from './lib/machine.mjs';
import { codeVersion } from './lib/code-version.mjs';
import { wholeNumber } from './lib/env-number.mjs';
import { createSections } from './lib/sections.mjs';
import { summary } from './lib/stats.mjs';
import { monotonicMicros } from './lib/hrtime.mjs';
import { postgresDatabase } from './knowledge/postgres.mjs';
import { writeStoresReport } from './lib/stores-report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_ROWS = 1_000_000;
const settings = {
  date: new Date().toISOString(),
  code: codeVersion(),
  rows: wholeNumber('BENCH_STORE_ROWS', DEFAULT_ROWS),
  durationSeconds: wholeNumber('BENCH_DURATION', 5),
  warmupSeconds: wholeNumber('BENCH_WARMUP', 2),
  page: wholeNumber('BENCH_PAGE', 5000),
  pageLimit: 100,
  putConnections: 16,
  webhookConnections: 32,
  rowCap: 2_000_000,
  rssSampleMs: 50,
};
/** The results are the full-size run's only: a reduced run would overwrite them with other figures. */
const FULL_SIZE = settings.rows === DEFAULT_ROWS;
/** BENCH_CPU_PROF=1: serve runs under `node --cpu-prof`; a profiled server is slower, so results are then not written. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF === '1' ? path.join(here, 'results', 'profiles') : undefined;
/** The maintenance database a fresh PostgreSQL database is created on, as lib/cluster-procs.mjs reads it. */
const ADMIN_URL = process.env.BENCH_DATABASE_URL || process.env.SWITCHYARD_TEST_DATABASE_URL || null;
if (settings.page * settings.pageLimit > settings.rows) {
  throw new Error(
    `BENCH_PAGE=${settings.page} pages of ${settings.pageLimit} need at least ${settings.page * settings.pageLimit} rows; BENCH_STORE_ROWS is ${settings.rows}`,
  );
}

const TARGETS = {
  putRowsPerSecond: 5000,
  restoreRowsPerSecond: 50_000,
  restoreRssMb: 100,
  dumpRowsPerSecond: 200_000,
  listP99Ms: 10,
};
const DIALECTS = [
  { id: 'sqlite', label: 'SQLite', process: 'serve, SQLite' },
  ...(ADMIN_URL ? [{ id: 'postgres', label: 'PostgreSQL', process: 'serve, PostgreSQL' }] : []),
];

const MEDIA = 'application/vnd.api+json';
const NDJSON = 'application/x-ndjson';

// ---------------------------------------------------------------------------------------------
// The data: one schema for every store (a few top-level fields, the kind row filters can read),
// and rows of about 200 bytes of JSON, the same generator for the API writes, the dump file and
// the webhook deliveries.

const STATUSES = ['pending', 'paid', 'shipped', 'refunded'];
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['status', 'amount', 'customer'],
  properties: {
    status: { type: 'string', enum: STATUSES },
    amount: { type: 'number', minimum: 0 },
    customer: { type: 'string', maxLength: 64 },
    note: { type: 'string', maxLength: 500 },
  },
};
const WORDS = ['invoice', 'parcel', 'express', 'gift wrap', 'back order', 'priority', 'returned', 'fragile', 'signature', 'weekend'];
/** Keys sort as the rows were generated (zero-padded), so key order is generation order. */
const keyOf = (i) => `order-${String(i).padStart(8, '0')}`;

/** Row `i`: status, amount, customer and a note that brings its JSON to about 200 bytes. */
function rowOf(i) {
  const words = Array.from({ length: 20 }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]).join(' ');
  return {
    status: STATUSES[i % STATUSES.length],
    amount: (i % 100_000) / 100,
    customer: `customer-${String(i % 50_000).padStart(5, '0')}`,
    note: words.slice(0, 127),
  };
}

// ---------------------------------------------------------------------------------------------
// Small helpers: the API client the setup uses (fetch, between loads, never timed), the server's
// memory from /proc, numbers for people.

const whole = (value) => Math.round(value).toLocaleString('en-US');
const ms = (value) => `${Number(value.toFixed(3))} ms`;
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
/** autocannon records latency in whole milliseconds, so 0 means under one. */
const acMs = (value) => (value === 0 ? '<1 ms' : `${value} ms`);
const verdict = (judged, pass) => (judged ? (pass ? 'PASS' : 'FAIL') : 'INFO');

function api(server) {
  const headers = { authorization: `Bearer ${server.token}`, accept: MEDIA, 'content-type': MEDIA };
  return async (method, url, body) => {
    const response = await fetch(`${server.baseUrl}${url}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status < 200 || response.status > 299)
      throw new Error(`${method} ${url} answered ${response.status}: ${text.slice(0, 400)}`);
    return text ? JSON.parse(text) : null;
  };
}

/** `POST /api/v1/stores` (JSON:API envelope): the store's id. */
async function createStore(call, name, slug) {
  const created = await call('POST', '/api/v1/stores', {
    data: { type: 'store', attributes: { name, slug, description: 'bench/stores.mjs', schema: SCHEMA, row_cap: settings.rowCap } },
  });
  return created.data.id;
}

/** The store's row_count and last_write_at (the latter is not in the default fieldset). */
async function storeState(call, id) {
  const { attributes } = (await call('GET', `/api/v1/stores/${id}?fields[store]=row_count,last_write_at`)).data;
  return { rowCount: attributes.row_count, lastWriteAt: attributes.last_write_at };
}

/** VmRSS, RssAnon (heap and native allocations) and RssFile (mapped files: code, SQLite's mmap) in bytes; null off Linux. */
function memoryOf(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const bytes = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]) * 1024;
    return { rss: bytes('VmRSS'), anon: bytes('RssAnon'), file: bytes('RssFile') };
  } catch {
    return null;
  }
}

/**
 * Samples the process's memory every `settings.rssSampleMs` from now until `stop()`, which
 * answers the baseline (the sample taken at the start), the peak of each figure and the growth
 * (peak - baseline). The timer runs in this process, beside the load it measures.
 */
function sampleMemory(pid) {
  const baseline = memoryOf(pid);
  if (!baseline) return { stop: () => null };
  const peak = { ...baseline };
  let samples = 1;
  const take = () => {
    const now = memoryOf(pid);
    if (!now) return;
    samples += 1;
    for (const name of Object.keys(peak)) peak[name] = Math.max(peak[name], now[name]);
  };
  const timer = setInterval(take, settings.rssSampleMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      const growth = Object.fromEntries(Object.keys(peak).map((name) => [name, peak[name] - baseline[name]]));
      return { baseline, peak, growth, samples, intervalMs: settings.rssSampleMs };
    },
  };
}

const describeMemory = (memory) =>
  memory
    ? `VmRSS ${mb(memory.baseline.rss)} before, peak ${mb(memory.peak.rss)} (+${mb(memory.growth.rss)}); of it anonymous memory +${mb(memory.growth.anon)}, mapped files +${mb(memory.growth.file)}; ${memory.samples} samples every ${memory.intervalMs} ms`
    : 'not measured (no /proc)';

/** Prints one figure as it is measured (PASS/FAIL beside a target) and returns it as a report row. */
function figure(row) {
  console.log(`  ${row.verdict.padEnd(4)} ${row.benchmark}: ${row.measured}${row.goal ? ` (goal ${row.goal})` : ''}`);
  return row;
}

// ---------------------------------------------------------------------------------------------
// 1. PUT rows. Every request writes a key the store has never held (an insert, 201), so the rate
// is of inserts, not replacements: measure()'s `paths` walks an array of distinct keys, a fresh
// array for each run (measure() restarts its walk at the first path for every autocannon run).

/** The most PUTs a second the key arrays allow for; a run that would wrap around fails instead. */
const MAX_PUTS_PER_SECOND = 50_000;

function keyPaths(storeId, prefix, seconds) {
  return Array.from(
    { length: seconds * MAX_PUTS_PER_SECOND },
    (_, i) => `/api/v1/stores/${storeId}/rows/${prefix}-${String(i).padStart(7, '0')}`,
  );
}

async function putRun(server, storeId, { label, prefix, connections, seconds }) {
  const paths = keyPaths(storeId, prefix, seconds);
  const result = await measure({
    label,
    url: server.baseUrl,
    headers: { authorization: `Bearer ${server.token}`, 'content-type': MEDIA, accept: 'application/json' },
    method: 'PUT',
    body: JSON.stringify({ data: { row: rowOf(7) } }),
    paths,
    connections,
    duration: seconds,
    warmup: 0,
  });
  // In-flight requests at the end are sent but not counted: they too must have had a fresh key.
  if (result.requests + connections > paths.length)
    throw new Error(`${label}: ${result.requests} requests used up the ${paths.length} distinct keys; raise MAX_PUTS_PER_SECOND`);
  server.loadSpans.push(result.span);
  return result;
}

async function measurePuts(dialect, server, call, baselines) {
  const { durationSeconds: duration, warmupSeconds: warmup, putConnections: connections } = settings;
  const storeId = await createStore(call, 'Bench PUT rows', 'bench-put-rows');
  const judged = dialect.id === 'sqlite';

  // 1 connection: one write at a time, the latency a sequential client sees.
  process.stdout.write(`  PUT, 1 connection: ${warmup} s warm-up + ${duration} s ... `);
  const warm1 = await putRun(server, storeId, { label: 'PUT warm-up (1 connection)', prefix: 'warm1', connections: 1, seconds: warmup });
  const one = await putRun(server, storeId, { label: 'PUT (1 connection)', prefix: 'one', connections: 1, seconds: duration });
  console.log(`${whole(one.requestsPerSecond)} rows/s`);
  const rows = [
    figure({
      benchmark: 'PUT /stores/:id/rows/:key, new key each, 1 connection: latency',
      goal: '',
      measured: `p50 ${acMs(one.p50)}, p99 ${acMs(one.p99)} (${whole(one.requestsPerSecond)} rows/s: ${ms(1000 / one.requestsPerSecond)} a write on average)`,
      verdict: 'INFO',
    }),
  ];

  // The baselines, right before the 16-connection run, at the same connection count.
  const bare = {};
  for (const baseline of baselines) {
    bare[baseline.id] = await measure({ label: baseline.id, url: baseline.url, connections, duration, warmup });
    rows.push(
      figure({
        process: 'bare',
        benchmark: `${baseline.label}, ${connections} connections`,
        goal: '',
        measured: `${whole(bare[baseline.id].requestsPerSecond)} req/s (p99 ${acMs(bare[baseline.id].p99)})`,
        verdict: 'INFO',
      }),
    );
  }

  process.stdout.write(`  PUT, ${connections} connections: ${warmup} s warm-up + ${duration} s ... `);
  const warm16 = await putRun(server, storeId, {
    label: `PUT warm-up (${connections} connections)`,
    prefix: 'warm16',
    connections,
    seconds: warmup,
  });
  const many = await putRun(server, storeId, { label: `PUT (${connections} connections)`, prefix: 'many', connections, seconds: duration });
  console.log(`${whole(many.requestsPerSecond)} rows/s`);
  const ratio = many.requestsPerSecond / bare.bare.requestsPerSecond;
  rows.push(
    figure({
      benchmark: `PUT /stores/:id/rows/:key, new key each, ${connections} connections: rows written per second`,
      goal: judged ? `>= ${whole(TARGETS.putRowsPerSecond)} rows/s` : `(SQLite's: >= ${whole(TARGETS.putRowsPerSecond)} rows/s)`,
      measured: `${whole(many.requestsPerSecond)} rows/s (p50 ${acMs(many.p50)}, p99 ${acMs(many.p99)})`,
      verdict: verdict(judged, many.requestsPerSecond >= TARGETS.putRowsPerSecond),
    }),
    figure({
      benchmark: `Ratio: PUT rows/s / bare Fastify req/s, ${connections} connections`,
      goal: '',
      measured: `${(ratio * 100).toFixed(1)}%`,
      verdict: 'INFO',
    }),
  );

  // Every answered PUT inserted: the store holds a row per request (plus those still in flight
  // when a run stopped, at most one per connection and run), never fewer.
  const runs = [warm1, one, warm16, many];
  const answered = runs.reduce((sum, run) => sum + run.requests, 0);
  const inFlight = 1 + 1 + connections + connections;
  const { rowCount } = await storeState(call, storeId);
  if (rowCount < answered || rowCount > answered + inFlight)
    throw new Error(
      `the store holds ${rowCount} rows after ${answered} answered PUTs of new keys (at most ${inFlight} more were in flight)`,
    );

  return {
    rows,
    details: [
      `A store with a JSON Schema of four top-level fields (\`status\` enum, \`amount\` number >= 0, \`customer\` string, \`note\` string; no additional properties) and \`row_cap\` ${whole(settings.rowCap)}, created through \`POST /api/v1/stores\`. Each request is \`PUT /api/v1/stores/:id/rows/:key\` with \`{"data":{"row":{…}}}\` (a ${JSON.stringify(rowOf(7)).length}-byte row, validated against the schema) and a key the store never held, so every write is an insert (201): autocannon walks an array of distinct keys, a new array for every run.`,
      `1 connection: ${whole(one.requests)} writes in ${duration} s after a ${warmup} s warm-up: p50 ${acMs(one.p50)}, p90 ${acMs(one.raw.latency.p90)}, p99 ${acMs(one.raw.latency.p99)}, max ${acMs(one.raw.latency.max)} (autocannon records whole milliseconds, so a sub-millisecond p50 reads <1 ms); one write after the other at ${whole(one.requestsPerSecond)} rows/s is ${ms(1000 / one.requestsPerSecond)} a round trip on average, client included. ${connections} connections: ${whole(many.requests)} writes in ${duration} s, ${whole(many.requestsPerSecond)} rows/s; p50 ${acMs(many.p50)}, p99 ${acMs(many.p99)}.`,
      `Bare Fastify 5 and bare node:http (hello world JSON, logger off) measured just before, ${duration} s each at ${connections} connections after a ${warmup} s warm-up: ${whole(bare.bare.requestsPerSecond)} and ${whole(bare['node-http'].requestsPerSecond)} req/s; the PUT rate is ${(ratio * 100).toFixed(1)}% of bare Fastify's.`,
      `Checked afterwards: the store holds ${whole(rowCount)} rows for ${whole(answered)} answered writes (each run may leave up to one in-flight write per connection uncounted).`,
    ],
    raw: {
      storeId,
      oneConnection: strip(one),
      warmupOneConnection: strip(warm1),
      manyConnections: strip(many),
      warmupManyConnections: strip(warm16),
      baselines: Object.fromEntries(Object.entries(bare).map(([id, run]) => [id, strip(run)])),
      ratioToBareFastify: ratio,
      rowCount,
      answered,
    },
  };
}

/** measure()'s result without autocannon's histogram buckets. */
const strip = ({ raw, ...run }) => ({ ...run, latency: raw.latency, requestsStats: raw.requests });

// ---------------------------------------------------------------------------------------------
// 2. Restore. The dump file is written to disk first (not timed), then streamed from a file read
// stream through node:http's request into `POST /stores/restore`, never held in memory here; the
// clock runs from the request's start to the report's last byte.

/** Writes the NDJSON dump of `count` rows (header line first) and returns its size in bytes. */
function writeDumpFile(file, count) {
  const header = {
    format: 'service-store/v1',
    name: 'Bench restored',
    slug: 'bench-restored',
    description: 'bench/stores.mjs',
    schema: SCHEMA,
    row_cap: settings.rowCap,
  };
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, `${JSON.stringify(header)}\n`);
    // Distinct, increasing times a millisecond apart, as rows written one after another have.
    const start = Date.parse('2026-01-01T00:00:00Z');
    const BATCH = 10_000;
    for (let from = 0; from < count; from += BATCH) {
      const lines = [];
      for (let i = from; i < Math.min(count, from + BATCH); i += 1) {
        const at = new Date(start + i).toISOString();
        lines.push(JSON.stringify({ key: keyOf(i), row: rowOf(i), created_at: at, updated_at: at }));
      }
      fs.writeSync(fd, `${lines.join('\n')}\n`);
    }
  } finally {
    fs.closeSync(fd);
  }
  return fs.statSync(file).size;
}

/** Streams the file to the restore route; resolves with the answer's status and parsed body. */
function streamRestore(server, file, slug) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${server.baseUrl}/api/v1/stores/restore?slug=${encodeURIComponent(slug)}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.token}`,
          'content-type': NDJSON,
          accept: MEDIA,
          'content-length': fs.statSync(file).size,
        },
      },
      (response) => {
        const chunks = [];
        response.setEncoding('utf8');
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          const text = chunks.join('');
          if (response.statusCode !== 201) reject(new Error(`POST /stores/restore answered ${response.statusCode}: ${text.slice(0, 400)}`));
          else resolve(JSON.parse(text));
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    pipeline(fs.createReadStream(file), request).catch(reject);
  });
}

async function restoreFile(server, file, slug) {
  const memory = sampleMemory(server.pid);
  const started = performance.now();
  let report;
  let rss = null;
  try {
    report = await streamRestore(server, file, slug);
  } finally {
    rss = memory.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  // The report must account for every line: all imported, nothing failed or duplicated.
  const expected = settings.rows;
  // The answer (DESIGN.md): the new store's document and meta {rows_imported, rows_failed, failures, duplicates}.
  const { data, meta } = report;
  if (meta.rows_imported !== expected || meta.rows_failed !== 0 || meta.duplicates.length !== 0 || data.attributes.row_count !== expected) {
    throw new Error(
      `the restore's report does not account for ${expected} rows: ${JSON.stringify({ data, meta: { ...meta, failures: meta.failures.slice(0, 3), duplicates: meta.duplicates.slice(0, 3) } })}`,
    );
  }
  return { report, seconds, rss };
}

async function measureRestore(dialect, server, dumpFile) {
  const judged = dialect.id === 'sqlite';
  process.stdout.write(`  restore of ${whole(settings.rows)} rows (${mb(dumpFile.bytes)}) ... `);
  const { report, seconds, rss } = await restoreFile(server, dumpFile.path, 'bench-restored');
  const rate = settings.rows / seconds;
  console.log(`${seconds.toFixed(2)} s`);
  const rows = [
    figure({
      benchmark: `POST /stores/restore, ${whole(settings.rows)} rows streamed: rows imported per second`,
      goal: judged ? `>= ${whole(TARGETS.restoreRowsPerSecond)} rows/s` : `(SQLite's: >= ${whole(TARGETS.restoreRowsPerSecond)} rows/s)`,
      measured: `${whole(rate)} rows/s (${seconds.toFixed(2)} s)`,
      verdict: verdict(judged, rate >= TARGETS.restoreRowsPerSecond),
    }),
    figure({
      benchmark: 'POST /stores/restore: peak RSS growth of the server',
      goal: `<= ${TARGETS.restoreRssMb} MB`,
      measured: rss
        ? `+${mb(rss.growth.rss)} (anonymous +${mb(rss.growth.anon)}, mapped files +${mb(rss.growth.file)})`
        : 'not measured (no /proc)',
      verdict: rss ? verdict(true, rss.growth.rss <= TARGETS.restoreRssMb * 1e6) : 'INFO',
    }),
  ];
  return {
    rows,
    details: [
      `The dump file (written before, not timed): the header line \`{"format":"service-store/v1", name, slug, description, schema, row_cap: ${whole(settings.rowCap)}}\`, then ${whole(settings.rows)} lines \`{key, row, created_at, updated_at}\` in key order with increasing times, rows of ${dumpFile.rowBytes} bytes of JSON on average (${dumpFile.lineBytes} bytes a line): ${mb(dumpFile.bytes)}.`,
      `Streamed with node:http \`request\` (a file read stream piped into it, \`Content-Type: ${NDJSON}\`, \`Content-Length\` set) to \`POST /api/v1/stores/restore?slug=bench-restored\`; timed from the request's start to the report's last byte: ${seconds.toFixed(2)} s, ${whole(rate)} rows/s.`,
      `The answer: ${whole(report.meta.rows_imported)} rows imported, ${report.meta.rows_failed} failed, ${report.meta.duplicates.length} duplicate keys; the new store holds ${whole(report.data.attributes.row_count)} rows.`,
      `Server memory (\`/proc/<pid>/status\`, sampled from just before the request to its answer): ${describeMemory(rss)}.`,
    ],
    raw: {
      storeId: report.data.id,
      seconds,
      rowsPerSecond: rate,
      report: {
        store: report.data,
        meta: { ...report.meta, failures: report.meta.failures.slice(0, 10), duplicates: report.meta.duplicates.slice(0, 10) },
      },
      memory: rss,
      file: { bytes: dumpFile.bytes, rowBytes: dumpFile.rowBytes, lineBytes: dumpFile.lineBytes },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 3. Dump. Read as a stream (lines counted in the chunks as they come, nothing kept), timed from
// the request to the last byte. The server reads a page of rows only when the socket took the
// previous one, so its memory should not grow with the store.

function streamDump(server, storeId) {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${server.baseUrl}/api/v1/stores/${storeId}/dump?format=ndjson`,
      { headers: { authorization: `Bearer ${server.token}` } },
      (response) => {
        if (response.statusCode !== 200) {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk) => (text += chunk));
          response.on('end', () => reject(new Error(`GET /stores/:id/dump answered ${response.statusCode}: ${text.slice(0, 400)}`)));
          return;
        }
        let lines = 0;
        let bytes = 0;
        let head = '';
        response.on('data', (chunk) => {
          bytes += chunk.length;
          if (lines < 2 && head.length < 64 * 1024) head += chunk.toString('utf8', 0, Math.min(chunk.length, 64 * 1024));
          for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
        });
        response.on('end', () =>
          resolve({ lines, bytes, contentType: response.headers['content-type'], head: head.split('\n').slice(0, 2) }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
  });
}

async function measureDump(dialect, server, storeId) {
  process.stdout.write(`  dump of ${whole(settings.rows)} rows ... `);
  const memory = sampleMemory(server.pid);
  const started = performance.now();
  let dump;
  let rss = null;
  try {
    dump = await streamDump(server, storeId);
  } finally {
    rss = memory.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`${seconds.toFixed(2)} s`);
  if (dump.lines !== settings.rows + 1)
    throw new Error(`the dump has ${dump.lines} lines, expected ${settings.rows + 1} (header + one per row)`);
  const header = JSON.parse(dump.head[0]);
  const first = JSON.parse(dump.head[1]);
  if (header.format !== 'service-store/v1' || header.row_cap !== settings.rowCap || first.key !== keyOf(0))
    throw new Error(`the dump starts ${dump.head.join(' / ').slice(0, 400)}`);
  const rate = settings.rows / seconds;
  const rows = [
    figure({
      benchmark: `GET /stores/:id/dump?format=ndjson, ${whole(settings.rows)} rows read as a stream: rows per second`,
      goal: `>= ${whole(TARGETS.dumpRowsPerSecond)} rows/s`,
      measured: `${whole(rate)} rows/s (${seconds.toFixed(2)} s, ${mb(dump.bytes)})`,
      verdict: verdict(true, rate >= TARGETS.dumpRowsPerSecond),
    }),
    figure({
      benchmark: 'GET /stores/:id/dump: peak RSS growth of the server',
      goal: 'reported (should stay flat)',
      measured: rss
        ? `+${mb(rss.growth.rss)} (anonymous +${mb(rss.growth.anon)}, mapped files +${mb(rss.growth.file)})`
        : 'not measured (no /proc)',
      verdict: 'INFO',
    }),
  ];
  return {
    rows,
    details: [
      `\`GET /api/v1/stores/:id/dump?format=ndjson\` of the restored store, read with node:http \`get\` as a stream, newlines counted chunk by chunk: ${whole(dump.lines)} lines (the header and ${whole(settings.rows)} rows, checked), ${mb(dump.bytes)}, \`${dump.contentType}\`, in ${seconds.toFixed(2)} s from the request to the last byte: ${whole(rate)} rows/s.`,
      `Server memory over the dump: ${describeMemory(rss)}.`,
    ],
    raw: { seconds, rowsPerSecond: rate, lines: dump.lines, bytes: dump.bytes, contentType: dump.contentType, memory: rss },
  };
}

// ---------------------------------------------------------------------------------------------
// 4. The row list (the change feed) at N rows. One connection, one request after the other
// (lib/latency-loop.mjs: undici, timed with hrtime to the last byte, sub-millisecond). The deep
// page is reached as a client does, by following links.next from the first page.

async function latencyOf(server, label, pathAndQuery) {
  const run = (duration) =>
    latencyLoop({
      origin: server.baseUrl,
      path: pathAndQuery,
      method: 'GET',
      headers: { authorization: `Bearer ${server.token}`, accept: MEDIA },
      connections: 1,
      duration,
      expectStatus: 200,
    });
  const warm = await run(settings.warmupSeconds);
  const from = monotonicMicros();
  const measured = await run(settings.durationSeconds);
  server.loadSpans.push([from, monotonicMicros()]);
  for (const result of [warm, measured]) {
    if (result.failures > 0) throw new Error(`${label}: ${result.failures} failed requests, e.g. ${result.failureSamples.join(' | ')}`);
  }
  return { ...summary(measured.latenciesMs, 3), requestsPerSecond: measured.requestsPerSecond, warmupRequests: warm.requests };
}

/**
 * PostgreSQL's statistics of store_rows, read from the database directly (not through serve):
 * the feed query's plan depends on whether the table was analyzed since the restore filled it.
 */
async function storeRowsStatistics(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      "select n_live_tup, n_mod_since_analyze, last_analyze, last_autoanalyze from pg_stat_user_tables where relname = 'store_rows'",
    );
    return rows[0] ?? null;
  } finally {
    await client.end();
  }
}

const describeStatistics = (stats) =>
  stats
    ? `${whole(Number(stats.n_live_tup))} live rows, ${whole(Number(stats.n_mod_since_analyze))} changed since the last analyze, last analyzed ${(stats.last_autoanalyze ?? stats.last_analyze) ? new Date(stats.last_autoanalyze ?? stats.last_analyze).toISOString() : 'never'}`
    : 'not available';

async function measureRowList(dialect, server, call, storeId, databaseUrl) {
  const { page, pageLimit, durationSeconds: duration, warmupSeconds: warmup } = settings;
  const statsBefore = databaseUrl ? await storeRowsStatistics(databaseUrl) : null;
  const firstPath = `/api/v1/stores/${storeId}/rows?page%5Blimit%5D=${pageLimit}`;
  process.stdout.write(`  first page: ${warmup} s warm-up + ${duration} s, 1 connection ... `);
  const first = await latencyOf(server, 'first page', firstPath);
  console.log(`${whole(first.count)} requests`);
  const rows = [
    figure({
      benchmark: `GET /stores/:id/rows?page[limit]=${pageLimit} at ${whole(settings.rows)} rows, first page, 1 connection: p99`,
      goal: `<= ${TARGETS.listP99Ms} ms`,
      measured: `${ms(first.p99)} (p50 ${ms(first.p50)})`,
      verdict: verdict(true, first.p99 <= TARGETS.listP99Ms),
    }),
  ];

  // Walk to page `page`: links.next of page k is page k + 1's URL. Every page is checked full.
  process.stdout.write(`  following links.next ${whole(page - 1)} times ... `);
  const walkStarted = performance.now();
  let pathAndQuery = firstPath;
  let document = await call('GET', pathAndQuery);
  for (let k = 2; k <= page; k += 1) {
    if (document.data.length !== pageLimit) throw new Error(`page ${k - 1} holds ${document.data.length} rows, expected ${pageLimit}`);
    const next = new URL(document.links.next);
    pathAndQuery = `${next.pathname}${next.search}`;
    document = await call('GET', pathAndQuery);
    if (k % 1000 === 0 && k < page)
      process.stdout.write(`page ${whole(k)} (${((performance.now() - walkStarted) / 1000).toFixed(1)} s) ... `);
  }
  const walkSeconds = (performance.now() - walkStarted) / 1000;
  // The feed is in (updated_at, key) order, which the dump file made key order: page `page`
  // starts with row (page - 1) * limit.
  const expectedKey = keyOf((page - 1) * pageLimit);
  if (document.data.length !== pageLimit || document.data[0].id !== expectedKey)
    throw new Error(`page ${page} starts with ${document.data[0]?.id} (${document.data.length} rows), expected ${expectedKey}`);
  console.log(`${walkSeconds.toFixed(1)} s (${ms((walkSeconds * 1000) / page)} a page)`);

  process.stdout.write(`  page ${whole(page)}: ${warmup} s warm-up + ${duration} s, 1 connection ... `);
  const deep = await latencyOf(server, `page ${page}`, pathAndQuery);
  console.log(`${whole(deep.count)} requests`);
  const statsAfter = databaseUrl ? await storeRowsStatistics(databaseUrl) : null;
  if (databaseUrl)
    console.log(
      `  PostgreSQL's statistics of store_rows before the first page: ${describeStatistics(statsBefore)}; after page ${whole(page)}: ${describeStatistics(statsAfter)}`,
    );
  rows.push(
    figure({
      benchmark: `GET /stores/:id/rows?page[limit]=${pageLimit} at ${whole(settings.rows)} rows, page ${whole(page)} (its links.next URL), 1 connection: p99`,
      goal: `<= ${TARGETS.listP99Ms} ms`,
      measured: `${ms(deep.p99)} (p50 ${ms(deep.p50)})`,
      verdict: verdict(true, deep.p99 <= TARGETS.listP99Ms),
    }),
  );

  return {
    rows,
    details: [
      `The change feed of the restored store (\`page[limit]\` is the feed's page size parameter; \`page[size]\` is refused with 400). Requests one after another on one keep-alive connection (bench/lib/latency-loop.mjs: undici, timed with hrtime from the request to the last byte of the body), ${warmup} s of warm-up, then ${duration} s measured, each answer checked 200.`,
      `First page: ${whole(first.count)} requests, p50 ${ms(first.p50)}, p90 ${ms(first.p90)}, p99 ${ms(first.p99)}, max ${ms(first.max)}.`,
      ...(databaseUrl
        ? [
            `PostgreSQL's statistics of \`store_rows\` (\`pg_stat_user_tables\`, read from the database, not through serve) before the first page: ${describeStatistics(statsBefore)}; after page ${whole(page)}: ${describeStatistics(statsAfter)}. Until the table is analyzed after the restore, the planner may read every row of the store for a page (a bitmap scan of the feed index, then a sort) instead of walking the index in order.`,
          ]
        : []),
      `Page ${whole(page)}: reached by following \`links.next\` ${whole(page - 1)} times from the first page (${walkSeconds.toFixed(1)} s, ${ms((walkSeconds * 1000) / page)} a page including the client's parsing; every page held ${pageLimit} rows, and page ${whole(page)} starts at \`${expectedKey}\`, as the feed's order says), then that URL (its cursor) asked repeatedly: ${whole(deep.count)} requests, p50 ${ms(deep.p50)}, p90 ${ms(deep.p90)}, p99 ${ms(deep.p99)}, max ${ms(deep.max)}.`,
    ],
    raw: {
      firstPage: first,
      deepPage: { page, ...deep },
      walk: { pages: page, seconds: walkSeconds },
      postgresStatistics: databaseUrl ? { before: statsBefore, after: statsAfter } : null,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 5. webhook (`immediate`) -> save_to_store. The 202 only says the execution was recorded; what
// counts is rows written by completed executions. After the load the suite waits, polling the
// API (only then, never during the load), until no execution of the workflow is pending or
// running; the rate is rows written / seconds from the load's start to the store's last write.

const WEBHOOKS_RESULTS = path.join(here, 'results', 'webhooks.json');
const DRAIN_TIMEOUT_MS = 10 * 60_000;

/** webhook -> code, immediate mode, on serve: the figure bench/results/webhooks.json recorded. */
function webhookToCodeFigure() {
  try {
    const recorded = JSON.parse(fs.readFileSync(WEBHOOKS_RESULTS, 'utf8'));
    const section = recorded.sections.find((s) => s.number === 1 && s.process === 'serve');
    const wholeRun = section.raw.webhookPhases.map((p) => p.wholeRunPerSecond).sort((a, b) => a - b);
    return {
      completedPerSecond: section.raw.completedPerSecond,
      wholeRunMedian: wholeRun[Math.floor(wholeRun.length / 2)],
      connections: section.raw.connections,
      date: recorded.settings.date,
      commit: recorded.settings.code?.commit ?? null,
    };
  } catch {
    return null;
  }
}

async function executionCount(call, workflowId, filter) {
  return (await call('GET', `/api/v1/workflows/${workflowId}/executions?${filter}&page%5Blimit%5D=1&page%5Bcount%5D=true`)).meta.count;
}

/** Polls until no execution of the workflow is pending, running or waiting; answers the counts then. */
async function drain(call, workflowId, storeId) {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while ((await executionCount(call, workflowId, 'filter%5Bstatus%5D%5Bin%5D=pending,running,waiting')) > 0) {
    if (Date.now() > deadline) throw new Error(`executions still unfinished ${DRAIN_TIMEOUT_MS / 1000} s after the load`);
    await sleep(100);
  }
  const failed = await executionCount(call, workflowId, 'filter%5Bstatus%5D%5Bin%5D=failed,cancelled');
  if (failed > 0) throw new Error(`${failed} executions of webhook -> save_to_store failed or were cancelled`);
  return { completed: await executionCount(call, workflowId, 'filter%5Bstatus%5D=completed'), ...(await storeState(call, storeId)) };
}

async function measureWebhookToStore(dialect, server, call) {
  const { webhookConnections: connections, durationSeconds: duration, warmupSeconds: warmup } = settings;
  const storeId = await createStore(call, 'Bench webhook sink', 'bench-webhook-sink');
  // The webhook node of the webhook benchmark (immediate, bearer), then one save_to_store step
  // inserting the delivered body under the execution's id: a key no other delivery has.
  const trigger = immediateGraph().nodes.find((node) => node.id === TRIGGER);
  const save = {
    id: 'save',
    type: 'save_to_store',
    config: { store_id: storeId, key: '{{ execution.id }}', row: '{{ trigger.body }}', mode: 'insert' },
    position: { x: 240, y: 0 },
  };
  const workflows = apiClient(server.baseUrl, server.token);
  const workflowId = await workflows.createWorkflow('bench: webhook -> save_to_store');
  const saved = await workflows.putGraph(workflowId, { nodes: [trigger, save], edges: [{ source: TRIGGER, target: 'save' }] });
  await workflows.activate(workflowId);
  const node = saved.graph.nodes.find((n) => n.id === TRIGGER);
  const token = saved.webhook_tokens?.[TRIGGER];
  if (!node?.config.webhook_id || !token)
    throw new Error(`PUT /graph answered no webhook_id or token: ${JSON.stringify(saved).slice(0, 400)}`);
  const target = {
    url: `${server.baseUrl}/webhooks/${node.config.webhook_id}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(rowOf(42)),
  };

  // One delivery first: answered 202 at once, and its row arrives.
  const answer = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
  const text = await answer.text();
  if (answer.status !== 202 || !/"execution_id":"[0-9a-f-]{36}"/.test(text))
    throw new Error(`the first delivery answered ${answer.status} ${text.slice(0, 300)}, expected 202 with an execution_id`);
  const checked = await drain(call, workflowId, storeId);
  if (checked.rowCount !== 1 || checked.completed !== 1) throw new Error(`after one delivery: ${JSON.stringify(checked)}`);

  const load = (seconds, label) =>
    measure({
      label,
      url: target.url,
      headers: target.headers,
      method: 'POST',
      body: target.body,
      connections,
      duration: seconds,
      warmup: 0,
    });
  process.stdout.write(`  warm-up: ${warmup} s at ${connections} connections, then drained ... `);
  await load(warmup, 'webhook -> save_to_store warm-up');
  const before = await drain(call, workflowId, storeId);
  console.log(`${whole(before.rowCount)} rows`);

  process.stdout.write(`  measured: ${duration} s at ${connections} connections, then drained ... `);
  const loadStart = Date.now();
  const result = await load(duration, 'webhook -> save_to_store');
  server.loadSpans.push(result.span);
  const loadSeconds = (Date.now() - loadStart) / 1000;
  const drainStarted = performance.now();
  const after = await drain(call, workflowId, storeId);
  const drainMs = performance.now() - drainStarted;
  const written = after.rowCount - before.rowCount;
  const completed = after.completed - before.completed;
  if (written !== completed || written < result.requests)
    throw new Error(
      `${result.requests} deliveries answered 202, ${completed} executions completed, ${written} rows written: every completed execution must have written its row`,
    );
  // The server and this process read the same system clock: the store's last write time ends the span.
  const seconds = (Date.parse(after.lastWriteAt) - loadStart) / 1000;
  const rate = written / seconds;
  console.log(`${whole(written)} rows, last ${seconds.toFixed(2)} s after the load's start`);

  const recorded = webhookToCodeFigure();
  const rows = [
    figure({
      benchmark: `\`immediate\` webhook -> save_to_store, ${connections} connections: executions completed (rows written) per second, load start to last row`,
      goal: '',
      measured: `${whole(rate)}/s (${whole(written)} rows in ${seconds.toFixed(2)} s; HTTP ${whole(result.requestsPerSecond)} answers/s)`,
      verdict: 'INFO',
    }),
    figure({
      benchmark: '`immediate` webhook -> code, serve on SQLite, as bench/results/webhooks.json recorded it',
      goal: '',
      measured: recorded
        ? `${whole(recorded.completedPerSecond)}/s (whole runs incl. drain: ${whole(recorded.wholeRunMedian)}/s); save_to_store is ${((rate / recorded.completedPerSecond) * 100).toFixed(1)}% of it`
        : `not available (${path.relative(process.cwd(), WEBHOOKS_RESULTS)} missing or unreadable)`,
      verdict: 'INFO',
    }),
  ];
  return {
    rows,
    details: [
      `Workflow created, \`PUT /graph\`, activated through the API: the webhook node of the webhook benchmark (\`response_mode: immediate\`, bearer verification), then \`save_to_store\` with \`key: "{{ execution.id }}"\`, \`row: "{{ trigger.body }}"\`, \`mode: insert\` into its own store (the same schema). Each delivery is \`POST /webhooks/<webhook_id>\` with the bearer token and a ${target.body.length}-byte JSON row as its body.`,
      `One delivery checked first (202 with an execution_id, then its row); a ${warmup} s warm-up at ${connections} connections, drained; then ${duration} s at ${connections} connections (autocannon): ${whole(result.requests)} answers 202 (${whole(result.requestsPerSecond)}/s, p50 ${acMs(result.p50)}, p99 ${acMs(result.p99)}) in ${loadSeconds.toFixed(2)} s.`,
      `After the load (not during it) the suite polled \`GET /workflows/:id/executions\` (status pending, running or waiting, \`page[count]\`) every 100 ms until none was left (${whole(drainMs)} ms), then checked: ${whole(completed)} executions completed, none failed, ${whole(written)} new rows in the store. The span runs from the load's start (this process's clock) to the store's \`last_write_at\` (the server's clock; the same machine): ${seconds.toFixed(2)} s, ${whole(rate)} completed/s.`,
      recorded
        ? `For comparison, \`immediate\` webhook -> code on serve (SQLite) in bench/results/webhooks.json (${recorded.date}${recorded.commit ? `, commit ${recorded.commit}` : ''}, ${recorded.connections} connections): ${whole(recorded.completedPerSecond)} completed/s, counted inside a window timed by the server's clock (load running before and after it), median of its rounds; its whole runs including the drain, which is closer to this method, ${whole(recorded.wholeRunMedian)}/s. That suite preloads its probe into serve.`
        : 'bench/results/webhooks.json was not available for the comparison.',
    ],
    raw: {
      storeId,
      workflowId,
      connections,
      durationSeconds: duration,
      answers: result.requests,
      httpRequestsPerSecond: result.requestsPerSecond,
      httpP50Ms: result.p50,
      httpP99Ms: result.p99,
      executionsCompleted: completed,
      rowsWritten: written,
      seconds,
      completedPerSecond: rate,
      drainMs,
      webhookToCode: recorded,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The run: bare baselines once, then each database's serve in turn.

const bench = createSections();
const machine = machineFacts();
const servers = {};
const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-bench-stores-'));
const baselineServers = [];

/** One database: serve on it, the five benchmarks, serve stopped (exit 0 required), the database dropped. */
async function runDialect(dialect, baselines, dumpFile) {
  let database = null;
  if (dialect.id === 'postgres') {
    database = await postgresDatabase(ADMIN_URL);
    if (!database) throw new Error('no PostgreSQL answered at BENCH_DATABASE_URL / SWITCHYARD_TEST_DATABASE_URL');
  }
  let server = null;
  try {
    server = await spawnServe({
      id: `stores-${dialect.id}`,
      env: { ...RATE_LIMITS, ...(database ? { DATABASE_URL: database.url } : {}) },
      profileDir: PROFILE_DIR,
    });
    // serve names its database on its start line: the run is on the database it claims to be.
    const named = /database: (\w+)/.exec(fs.readFileSync(server.logFile, 'utf8'))?.[1];
    if (named !== dialect.id) throw new Error(`serve started on database "${named}", expected ${dialect.id}`);
    console.log(
      `\n== ${dialect.label}: ${server.command} on ${server.baseUrl}${database ? ` (PostgreSQL ${database.version}, a fresh database)` : ''}`,
    );
    const call = api(server);
    const target = { process: dialect.process, label: '', judged: true };

    await bench.section(1, 'PUT rows', () => measurePuts(dialect, server, call, baselines), target);
    let restoredId = null;
    await bench.section(
      2,
      'Restore',
      async () => {
        const result = await measureRestore(dialect, server, dumpFile);
        restoredId = result.raw.storeId;
        return result;
      },
      target,
    );
    // With BENCH_ONLY leaving out the restore, sections 3 and 4 still need its rows.
    if (restoredId === null && bench.only && (bench.only.has(3) || bench.only.has(4)) && !bench.only.has(2)) {
      console.log('  (restoring the rows sections 3 and 4 read; not measured)');
      restoredId = (await restoreFile(server, dumpFile.path, 'bench-restored')).report.data.id;
    }
    const needRestored = () => {
      if (restoredId === null) throw new Error('the restore failed, so there is no store of N rows to read');
      return restoredId;
    };
    await bench.section(3, 'Dump', () => measureDump(dialect, server, needRestored()), target);
    await bench.section(
      4,
      'Row list (change feed) at N rows',
      () => measureRowList(dialect, server, call, needRestored(), database?.url ?? null),
      target,
    );
    await bench.section(5, 'webhook -> save_to_store', () => measureWebhookToStore(dialect, server, call), target);
  } finally {
    try {
      if (server) {
        const stopped = await server.stop();
        servers[dialect.id] = {
          command: server.command,
          env: server.env,
          database: database ? `PostgreSQL ${database.version}` : 'SQLite',
          log: stopped.log,
          shutdownMs: stopped.shutdownMs,
        };
        if (stopped.profiles.length > 0)
          console.log(
            `  CPU profiles: ${stopped.profiles.map((file) => path.relative(process.cwd(), file)).join(', ')} (and .txt summaries)`,
          );
        console.log(
          `  serve (${dialect.label}) logged ${whole(stopped.log.lines)} lines (${mb(stopped.log.bytes)}, ${stopped.log.errors} errors) and exited 0 on SIGTERM after ${stopped.shutdownMs} ms`,
        );
        if (stopped.log.errors > 0) {
          bench.failed = true;
          console.error(
            `ERROR: serve (${dialect.label}) logged ${stopped.log.errors} errors, e.g.\n${stopped.log.errorSamples.join('\n')}`,
          );
        }
      }
    } finally {
      if (database) await database.drop();
    }
  }
}

let dumpFile;
try {
  const file = path.join(tempDir, 'bench-restored.ndjson');
  process.stdout.write(`Writing the dump file: ${whole(settings.rows)} rows ... `);
  const bytes = writeDumpFile(file, settings.rows);
  const rowBytes = Math.round(Array.from({ length: 1000 }, (_, i) => JSON.stringify(rowOf(i)).length).reduce((a, b) => a + b) / 1000);
  dumpFile = { path: file, bytes, rowBytes, lineBytes: Math.round(bytes / (settings.rows + 1)) };
  console.log(`${mb(bytes)} (rows of ${rowBytes} bytes of JSON on average)`);

  const nodeHttp = await spawnServer(path.join(here, 'servers', 'bare-node-http.mjs'), [], { id: 'node-http' });
  baselineServers.push(nodeHttp);
  const fastify = await spawnServer(path.join(here, 'servers', 'bare-fastify.mjs'), [], { id: 'bare' });
  baselineServers.push(fastify);
  const baselines = [
    { id: 'bare', label: 'Bare Fastify 5 `GET /` (hello world)', url: `${fastify.baseUrl}/` },
    { id: 'node-http', label: 'Bare node:http `GET /` (hello world JSON)', url: `${nodeHttp.baseUrl}/` },
  ];

  for (const dialect of DIALECTS) {
    try {
      await runDialect(dialect, baselines, dumpFile);
    } catch (error) {
      bench.failed = true;
      console.error(`ERROR on ${dialect.label}:`, error);
      bench.sections.push({
        number: 0,
        title: `${dialect.label} run`,
        process: dialect.process,
        rows: [
          { process: dialect.process, benchmark: `${dialect.label} run`, goal: '', measured: `error: ${error.message}`, verdict: 'ERROR' },
        ],
        details: [`Error: ${error.message}`],
        raw: { error: String(error.stack ?? error) },
      });
    }
  }
} finally {
  try {
    await stopAll(baselineServers);
  } catch (error) {
    bench.failed = true;
    console.error('ERROR while stopping the bare baselines:', error);
  }
  fs.rmSync(tempDir, { recursive: true, force: true });
}

console.log('');
const rows = bench.sections.flatMap((s) => s.rows);
for (const row of rows)
  console.log(`${row.verdict.padEnd(5)} [${row.process}] ${row.benchmark}: ${row.goal ? `${row.goal} ` : ''}(measured ${row.measured})`);
if (!ADMIN_URL)
  console.log(
    '\nPostgreSQL not measured: set BENCH_DATABASE_URL (or SWITCHYARD_TEST_DATABASE_URL) to a maintenance database, e.g. postgres://postgres@127.0.0.1:5432/postgres',
  );
if (!FULL_SIZE)
  console.log(
    `\nResults not written (reduced size: BENCH_STORE_ROWS=${settings.rows}, the results are the ${whole(DEFAULT_ROWS)}-row run's).`,
  );
else if (bench.only || PROFILE_DIR) console.log('\nResults not written (BENCH_ONLY or BENCH_CPU_PROF set).');
else {
  const report = {
    machine,
    machineAfter: machineFacts().loadAverage,
    settings: { ...settings, targets: TARGETS, postgres: Boolean(ADMIN_URL) },
    servers,
    rows,
    sections: bench.sections.map(({ number, title, process: target, details, raw }) => ({ number, title, process: target, details, raw })),
  };
  const written = writeStoresReport(path.join(here, 'results'), report);
  console.log(`\nWrote ${written.map((file) => path.relative(process.cwd(), file)).join(' and ')}`);
}
// Exit now: spawn-serve.mjs's stop() leaves its 60 s shutdown timeout pending after the server
// exited, which would keep this process alive for a minute after the run.
process.exit(bench.failed ? 1 : 0);
