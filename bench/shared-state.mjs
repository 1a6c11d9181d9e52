// `npm run bench:shared`: what the state shared across API processes on PostgreSQL costs, and
// what the metrics cost a request. Builds nothing itself (the npm script runs `npm run build`
// first); needs a PostgreSQL server: BENCH_DATABASE_URL (or SWITCHYARD_TEST_DATABASE_URL) names a
// maintenance database, where scratch databases are created and dropped. Everything runs in this
// one process, requests through app.inject, so the figures are costs per request or per commit
// on the same footing, not throughput a client would see. Writes bench/results/shared-state.{md,json}.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import { buildDeps } from '../dist/deps.js';
import { buildApp } from '../dist/app.js';
import { Authenticator } from '../dist/services/identity/authenticator.js';
import { TokenStore } from '../dist/store/token-repository.js';
import { systemClock } from '../dist/lib/clock.js';
import { Metrics } from '../dist/observability/metrics.js';
import { machineFacts } from './lib/machine.mjs';
import { median } from './lib/stats.mjs';
import { seedWorkflows } from './lib/seed-workflows.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ADMIN_URL = process.env.BENCH_DATABASE_URL || process.env.SWITCHYARD_TEST_DATABASE_URL;
if (!ADMIN_URL)
  throw new Error(
    'set BENCH_DATABASE_URL (or SWITCHYARD_TEST_DATABASE_URL) to a PostgreSQL maintenance database, e.g. postgres://postgres@127.0.0.1:5432/postgres',
  );
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const SECRET = 'bench-secret-key-bench-secret-key-0123456789';
const round1 = (value) => Math.round(value * 10) / 10;

async function admin(text) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function scratchDatabase(name) {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** Median microseconds of `fn` per call, over `count` sequential calls. */
async function perCall(fn, count) {
  const times = [];
  for (let i = 0; i < count; i += 1) {
    const start = performance.now();
    await fn(i);
    times.push((performance.now() - start) * 1000);
  }
  return median(times);
}

/**
 * Runs each variant `count` times per round, the variants interleaved, ROUNDS rounds; reports
 * each variant's median over the rounds of its per-round median.
 */
async function interleaved(variants, count) {
  const rounds = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, fn] of Object.entries(variants)) rounds[name].push(await perCall(fn, count));
  }
  return Object.fromEntries(Object.entries(rounds).map(([name, values]) => [name, round1(median(values))]));
}

/** Commits per second of `clients` connections each running `each` statements from `statement(client, i)`. */
async function concurrentRate(clients, each, statement) {
  const start = performance.now();
  await Promise.all(
    clients.map(async (client, c) => {
      for (let i = 0; i < each; i += 1) await statement(client, c * each + i);
    }),
  );
  return (clients.length * each) / ((performance.now() - start) / 1000);
}

async function setTrigger(url, table, trigger, enabled) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`ALTER TABLE ${table} ${enabled ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`);
  await client.end();
}

const config = (url, apiRateLimit = 0) => ({
  databaseUrl: url,
  dataDir: '/nonexistent',
  secretKey: SECRET,
  baseUrl: 'http://bench.test',
  apiRateLimit,
  webhookRateLimit: 0,
  trustProxy: [],
  metricsToken: null,
});

/** A write to a table whose writes are announced, with and without the announcing trigger. */
async function measureAnnouncements(url) {
  const deps = await buildDeps(config(url), { timers: false });
  const first = await deps.identity.bootstrap();
  await seedWorkflows(deps, first.workspace, 400);
  const ids = (await deps.db.selectFrom('workflows').select('id').execute()).map((row) => row.id);
  const execution = {
    id: 'bench-execution',
    workspace_id: (await deps.db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow()).id,
    workflow_id: ids[0],
    workflow_snapshot_id: 's',
    status: 'running',
    call_depth: 0,
    inserted_at: '2026-01-01T00:00:00.000000Z',
    updated_at: '2026-01-01T00:00:00.000000Z',
  };
  await deps.db.insertInto('executions').values(execution).execute();
  // As if the engine's step rows were announced too: the what-if that keeps them without a trigger.
  const bench = new pg.Client({ connectionString: url });
  await bench.connect();
  await bench.query(
    'CREATE TRIGGER sy_bench_announce AFTER INSERT ON execution_steps FOR EACH STATEMENT EXECUTE FUNCTION sy_announce_write()',
  );
  const clients = await Promise.all(
    Array.from({ length: 8 }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  const update = (client, i) =>
    client.query('UPDATE workflows SET updated_at = $1 WHERE id = $2', [new Date().toISOString(), ids[i % ids.length]]);
  let step = 0;
  const insertStep = (client) =>
    client.query(
      "INSERT INTO execution_steps (id, workspace_id, workflow_execution_id, node_id, status, attempt, inserted_at, updated_at) VALUES ($1, $2, 'bench-execution', 'n', 'completed', 1, 'x', 'x')",
      [`s${(step += 1)}`, execution.workspace_id],
    );

  const serial = { announced: [], silent: [] };
  const concurrent = { announced: [], silent: [] };
  const steps = { announced: [], silent: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const mode of ['announced', 'silent']) {
      await setTrigger(url, 'workflows', 'sy_announce_write', mode === 'announced');
      await setTrigger(url, 'execution_steps', 'sy_bench_announce', mode === 'announced');
      serial[mode].push(await perCall((i) => update(bench, i), 500));
      concurrent[mode].push(await concurrentRate(clients, 150, update));
      steps[mode].push(await concurrentRate(clients, 150, insertStep));
    }
  }
  await setTrigger(url, 'workflows', 'sy_announce_write', true);
  await bench.query('DROP TRIGGER sy_bench_announce ON execution_steps');

  // The sync round trip every cached read waits for, beside the query it saves on a token look-up.
  const notifier = deps.database.notifier;
  const tokens = new TokenStore(deps.db);
  const reads = await interleaved(
    { sync: () => notifier.sync(), tokenQuery: () => tokens.findIdentitiesByPrefix(first.token.slice(0, 12)) },
    1000,
  );

  for (const client of [bench, ...clients]) await client.end();
  await deps.close();
  const med = (values) => round1(median(values));
  return {
    serialUpdateMicros: { announced: med(serial.announced), silent: med(serial.silent) },
    concurrentUpdatesPerSecond: { announced: Math.round(median(concurrent.announced)), silent: Math.round(median(concurrent.silent)) },
    concurrentStepInsertsPerSecond: { announced: Math.round(median(steps.announced)), silent: Math.round(median(steps.silent)) },
    syncMicros: reads.sync,
    tokenQueryMicros: reads.tokenQuery,
  };
}

/** Requests through app.inject on PostgreSQL: caches on and off, the shared rate-limit store on and off. */
async function measureRequests(url) {
  const deps = await buildDeps(config(url), { timers: false });
  const first = await deps.identity.bootstrap();
  await seedWorkflows(deps, first.workspace, 200);
  const headers = { authorization: `Bearer ${first.token}` };
  const cached = await buildApp({ ...deps, config: config(url), logger: false });
  const uncached = await buildApp({
    ...deps,
    authenticator: new Authenticator(new TokenStore(deps.db), systemClock, null),
    listCache: null,
    config: config(url),
    logger: false,
  });
  const limited = await buildApp({ ...deps, config: config(url, 100_000_000), logger: false });
  const get = (app, path) => async () => {
    const answer = await app.inject({ method: 'GET', url: path, headers });
    if (answer.statusCode !== 200) throw new Error(`${path} answered ${answer.statusCode}: ${answer.body}`);
  };
  const me = await interleaved(
    { cached: get(cached, '/api/v1/me'), uncached: get(uncached, '/api/v1/me'), rateLimited: get(limited, '/api/v1/me') },
    1000,
  );
  const list = await interleaved({ cached: get(cached, '/api/v1/workflows'), uncached: get(uncached, '/api/v1/workflows') }, 300);
  // Eight requests in flight at a time: callers share sync round trips.
  const inFlight = async (app) => {
    const start = performance.now();
    for (let i = 0; i < 250; i += 1) await Promise.all(Array.from({ length: 8 }, get(app, '/api/v1/me')));
    return 2000 / ((performance.now() - start) / 1000);
  };
  const parallel = { cached: [], uncached: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    parallel.cached.push(await inFlight(cached));
    parallel.uncached.push(await inFlight(uncached));
  }
  for (const app of [cached, uncached, limited]) await app.close();
  await deps.close();
  return {
    meMicros: me,
    workflowsMicros: list,
    meEightInFlightPerSecond: { cached: Math.round(median(parallel.cached)), uncached: Math.round(median(parallel.uncached)) },
  };
}

/** GET /api/v1/me on SQLite with and without the metrics, and the histogram's observe by itself. */
async function measureMetrics() {
  const dir = fs.mkdtempSync(path.join(here, 'tmp-metrics-'));
  try {
    const deps = await buildDeps({ databaseUrl: null, dataDir: dir, secretKey: SECRET, baseUrl: 'http://bench.test' }, { timers: false });
    const first = await deps.identity.bootstrap();
    const headers = { authorization: `Bearer ${first.token}` };
    const sqliteConfig = { apiRateLimit: 0, webhookRateLimit: 0, trustProxy: [], baseUrl: 'http://bench.test', metricsToken: null };
    // As in production, a logger writing the access line (to /dev/null here) in both: Fastify
    // follows answers to their end only with a logger, so without one the difference would
    // include that bookkeeping as well as the metrics.
    const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false }));
    const withMetrics = await buildApp({ ...deps, config: sqliteConfig, logger });
    const without = await buildApp({ ...deps, metrics: null, config: sqliteConfig, logger });
    const get = (app) => async () => {
      const answer = await app.inject({ method: 'GET', url: '/api/v1/me', headers });
      if (answer.statusCode !== 200) throw new Error(`/me answered ${answer.statusCode}`);
    };
    const me = await interleaved({ withMetrics: get(withMetrics), without: get(without) }, 3000);
    const metrics = new Metrics();
    const observe = await interleaved({ observe: () => metrics.httpRequest('GET', '/api/v1/me', 200, 0.0004) }, 20_000);
    await withMetrics.close();
    await without.close();
    await deps.close();
    return { meMicros: me, observeMicros: observe.observe };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function report(results) {
  const r = results;
  const a = r.announcements;
  const pct = (x, y) => `${(((x - y) / y) * 100).toFixed(1)}%`;
  return `# Shared state and metrics: costs

Measured by \`npm run bench:shared\` (bench/shared-state.mjs) on ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}, PostgreSQL on the same machine (load average at start ${r.machine.loadAverage.join(', ')}).
Every figure is the median over ${r.rounds} interleaved rounds of the round's median (or rate). Requests go through \`app.inject\` in one process: per-request costs on one footing, not what a client over the network sees.

## Write announcements (PostgreSQL)

| measure | announced | trigger disabled | cost |
| --- | ---: | ---: | ---: |
| one \`UPDATE workflows\` commit, one connection (µs) | ${a.serialUpdateMicros.announced} | ${a.serialUpdateMicros.silent} | ${round1(a.serialUpdateMicros.announced - a.serialUpdateMicros.silent)} µs (${pct(a.serialUpdateMicros.announced, a.serialUpdateMicros.silent)}) |
| \`UPDATE workflows\` commits/s, 8 connections | ${a.concurrentUpdatesPerSecond.announced.toLocaleString('en-US')} | ${a.concurrentUpdatesPerSecond.silent.toLocaleString('en-US')} | ${pct(a.concurrentUpdatesPerSecond.announced, a.concurrentUpdatesPerSecond.silent)} |
| what-if: \`INSERT execution_steps\` commits/s, 8 connections, were the engine's table announced | ${a.concurrentStepInsertsPerSecond.announced.toLocaleString('en-US')} | ${a.concurrentStepInsertsPerSecond.silent.toLocaleString('en-US')} | ${pct(a.concurrentStepInsertsPerSecond.announced, a.concurrentStepInsertsPerSecond.silent)} |

The engine's tables carry no trigger, so an engine-heavy run pays nothing; the last row is why.

## Cached reads on PostgreSQL

| measure | µs |
| --- | ---: |
| \`sync()\`: the round trip on the listening connection before a cached read | ${a.syncMicros} |
| the token look-up query it saves | ${a.tokenQueryMicros} |
| \`GET /api/v1/me\`, token cache on | ${r.requests.meMicros.cached} |
| \`GET /api/v1/me\`, token cache off | ${r.requests.meMicros.uncached} |
| \`GET /api/v1/workflows\` (50 of 200), list and token caches on | ${r.requests.workflowsMicros.cached} |
| \`GET /api/v1/workflows\`, caches off | ${r.requests.workflowsMicros.uncached} |
| \`GET /api/v1/me\`, caches on, rate limit counted in PostgreSQL | ${r.requests.meMicros.rateLimited} |

Eight \`GET /api/v1/me\` in flight at a time: ${r.requests.meEightInFlightPerSecond.cached.toLocaleString('en-US')} requests/s with the caches, ${r.requests.meEightInFlightPerSecond.uncached.toLocaleString('en-US')} without (requests arriving together share one sync round trip).

## Metrics (SQLite, \`GET /api/v1/me\`)

| measure | µs |
| --- | ---: |
| with the metrics (request histogram fed from the access log; access lines written to /dev/null) | ${r.metrics.meMicros.withMetrics} |
| without | ${r.metrics.meMicros.without} |
| the histogram's \`observe\` alone | ${r.metrics.observeMicros} |

The request metrics cost the \`observe\` and its label object, ${round1(r.metrics.meMicros.withMetrics - r.metrics.meMicros.without)} µs measured end to end:
a difference of a few microseconds either way is within this machine's run-to-run noise.

Raw numbers: [shared-state.json](shared-state.json).
`;
}

// BENCH_RENDER_ONLY=1 rewrites the page from the recorded JSON (after a change of wording).
if (process.env.BENCH_RENDER_ONLY === '1') {
  const results = JSON.parse(fs.readFileSync(path.join(here, 'results', 'shared-state.json'), 'utf8'));
  fs.writeFileSync(path.join(here, 'results', 'shared-state.md'), report(results));
  process.exit(0);
}

const scratch = [await scratchDatabase('sy_bench_shared_a'), await scratchDatabase('sy_bench_shared_b')];
try {
  const results = { machine: machineFacts(), rounds: ROUNDS };
  results.announcements = await measureAnnouncements(scratch[0].url);
  results.requests = await measureRequests(scratch[1].url);
  results.metrics = await measureMetrics();
  const dir = path.join(here, 'results');
  fs.writeFileSync(path.join(dir, 'shared-state.json'), `${JSON.stringify(results, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, 'shared-state.md'), report(results));
  console.log(report(results));
} finally {
  for (const db of scratch) await db.drop();
}
// The notifier's reconnect timers and pg's sockets are closed; pino's flush needs nothing.
process.exit(0);
