// `npm run bench:cluster`: scale-out on PostgreSQL (issue 13). In one run, on this machine:
// - `cluster`: one API process and two workers (`node dist/main.js serve --role api|worker`) on
//   a scratch PostgreSQL database, at the defaults (lease 30 s, heartbeat 10 s, poll 1 s);
// - `sqlite-all`: one `serve --role all` on SQLite (the default setup), the same loads;
// - bare node:http and bare Fastify hello-world servers, the ceiling of this machine and client;
// - a bare PostgreSQL handoff (servers/bare-pg-handoff.mjs): one API and two worker processes of
//   plain node:http + pg doing the least the design costs (the insert handing the execution to a
//   worker with its NOTIFY, then the end's rows + answer NOTIFY: two statements), the same three
//   loads. It is the floor of this design on this machine and in this hour, beside which the
//   cluster's figures are read.
// Figures: immediate-mode completed executions/s (webhook -> code, 32 connections), claim
// latency from the execution's commit to its first step's start (from the rows' timestamps, at
// a light load of one delivery at a time, and under the throughput load), respond_step answer
// latency at 8 connections, and, for the cluster, the time for the surviving worker to finish
// the executions of a worker killed with SIGKILL, at the default lease.
// Needs BENCH_DATABASE_URL (or SWITCHYARD_TEST_DATABASE_URL). Writes bench/results/cluster.{md,json}.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetch } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { measureBareHandoff } from './lib/bare-handoff.mjs';
import { apiClient, clusterDatabase, edge, node, startRole } from './lib/cluster-procs.mjs';
import { latencyLoop, settledRespond } from './lib/latency-loop.mjs';
import { machineFacts } from './lib/machine.mjs';
import { postgresCpuMs, processCpuMs, sumCpu } from './lib/process-cpu.mjs';
import { quantile } from './lib/stats.mjs';
import { spawnServer } from './lib/spawn-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const DURATION_S = Number(process.env.BENCH_DURATION || 5);
const LIGHT_DELIVERIES = Number(process.env.BENCH_LIGHT_DELIVERIES || 200);
const TAKEOVER_EXECUTIONS = 10;
// respond_step is measured at steady state: after its first window (reported as the cold figure),
// the same load runs on until RESPOND_SETTLE_S seconds of it have passed, then the measured window.
const RESPOND_SETTLE_S = Number(process.env.BENCH_RESPOND_SETTLE || 20);
const DEFAULT_LEASE_MS = 30_000;
const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const ms = (from, to) => Date.parse(to) - Date.parse(from) + (Number(to.slice(23, 26) || 0) - Number(from.slice(23, 26) || 0)) / 1000;

const immediateGraph = {
  nodes: [node('hook', 'webhook', { response_mode: 'immediate' }), node('shape', 'code', { code: 'return { seen: input.body };' })],
  edges: [edge('hook', 'shape')],
};
const respondGraph = {
  nodes: [
    node('hook', 'webhook', { response_mode: 'respond_step' }),
    node('shape', 'code', { code: 'return { seen: input.body };' }),
    node('respond', 'respond_to_webhook', { status: 200, body: '{{ nodes.shape }}' }),
  ],
  edges: [edge('hook', 'shape'), edge('shape', 'respond')],
};
// The respond step alone (no code step, so no sandbox): the respond path across processes itself.
const respondOnlyGraph = {
  nodes: [
    node('hook', 'webhook', { response_mode: 'respond_step' }),
    node('respond', 'respond_to_webhook', { status: 200, body: '{{ input.body }}' }),
  ],
  edges: [edge('hook', 'respond')],
};
const DELIVERY = JSON.stringify({ order: 42, items: ['a', 'b'] });

/** The rows the measurements read: PostgreSQL through Kysely, SQLite through a read-only connection. */
function reader(target) {
  if (target.db) {
    return {
      counts: async (workflowId) => {
        const rows = await target.db
          .selectFrom('executions')
          .select(['status'])
          .select((eb) => eb.fn.countAll().as('n'))
          .where('workflow_id', '=', workflowId)
          .groupBy('status')
          .execute();
        return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
      },
      firstStepDelays: async (workflowId) => {
        const rows = await target.db
          .selectFrom('executions')
          .innerJoin('execution_steps', 'execution_steps.workflow_execution_id', 'executions.id')
          .select(['executions.inserted_at as committed', 'execution_steps.started_at as started', 'executions.finished_at as finished'])
          .where('executions.workflow_id', '=', workflowId)
          .where('execution_steps.node_id', '=', 'shape')
          .execute();
        return rows;
      },
    };
  }
  const sqlite = new Database(path.join(target.server.dataDir, 'switchyard.db'), { readonly: true, fileMustExist: true });
  return {
    counts: async (workflowId) =>
      Object.fromEntries(
        sqlite
          .prepare('select status, count(*) as n from executions where workflow_id = ? group by status')
          .all(workflowId)
          .map((row) => [row.status, row.n]),
      ),
    firstStepDelays: async (workflowId) =>
      sqlite
        .prepare(
          "select e.inserted_at as committed, s.started_at as started, e.finished_at as finished from executions e join execution_steps s on s.workflow_execution_id = e.id where e.workflow_id = ? and s.node_id = 'shape'",
        )
        .all(workflowId),
    close: () => sqlite.close(),
  };
}

const terminal = (counts) => (counts.completed ?? 0) + (counts.failed ?? 0) + (counts.cancelled ?? 0);
const total = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);

async function immediateThroughput(target, flow, rows) {
  const url = new URL(flow.hookUrl);
  const startedAt = Date.now();
  const loop = await latencyLoop({
    origin: url.origin,
    path: url.pathname,
    method: 'POST',
    headers: { authorization: `Bearer ${flow.hookToken}`, 'content-type': 'application/json' },
    body: DELIVERY,
    connections: 32,
    duration: DURATION_S,
    expectStatus: 202,
  });
  const loadEnd = Date.now();
  let counts = await rows.counts(flow.id);
  while (terminal(counts) < total(counts) && Date.now() - loadEnd < 120_000) {
    await sleep(20);
    counts = await rows.counts(flow.id);
  }
  const drainedAt = Date.now();
  const delays = await rows.firstStepDelays(flow.id);
  const loadEndIso = new Date(loadEnd).toISOString();
  const completedInWindow = delays.filter((row) => row.finished !== null && row.finished.slice(0, 23) <= loadEndIso.slice(0, 23)).length;
  const claim = delays.filter((row) => row.started).map((row) => ms(row.committed, row.started));
  return {
    accepted: loop.requests,
    failures: loop.failures,
    answersPerSecond: round(loop.requestsPerSecond, 0),
    completed: counts.completed ?? 0,
    notCompleted: total(counts) - (counts.completed ?? 0),
    completedPerSecondInWindow: round(completedInWindow / ((loadEnd - startedAt) / 1000), 0),
    completedPerSecondWithDrain: round((counts.completed ?? 0) / ((drainedAt - startedAt) / 1000), 0),
    drainMs: drainedAt - loadEnd,
    claimUnderLoadMs: { p50: round(quantile(claim, 0.5)), p99: round(quantile(claim, 0.99)) },
  };
}

/** One delivery at a time (each after the previous one's 202 and a 10 ms pause): the latency from commit to the first step's start. */
async function claimLatency(flow, rows) {
  for (let i = 0; i < LIGHT_DELIVERIES; i += 1) {
    const response = await fetch(flow.hookUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${flow.hookToken}`, 'content-type': 'application/json' },
      body: DELIVERY,
    });
    if (response.status !== 202) throw new Error(`delivery answered ${response.status}: ${await response.text()}`);
    await response.text();
    await sleep(10);
  }
  let counts = await rows.counts(flow.id);
  while (terminal(counts) < LIGHT_DELIVERIES) {
    await sleep(20);
    counts = await rows.counts(flow.id);
  }
  const delays = (await rows.firstStepDelays(flow.id)).map((row) => ms(row.committed, row.started));
  return {
    deliveries: LIGHT_DELIVERIES,
    p50: round(quantile(delays, 0.5)),
    p99: round(quantile(delays, 0.99)),
    max: round(Math.max(...delays)),
  };
}

async function respondLatency(flow, cpuParts, settleS = RESPOND_SETTLE_S) {
  const url = new URL(flow.hookUrl);
  const load = (duration) =>
    latencyLoop({
      origin: url.origin,
      path: url.pathname,
      method: 'POST',
      headers: { authorization: `Bearer ${flow.hookToken}`, 'content-type': 'application/json' },
      body: DELIVERY,
      connections: 8,
      duration,
      expectStatus: 200,
    });
  return settledRespond(load, DURATION_S, settleS, cpuParts);
}

async function measureTarget(name, target) {
  const client = apiClient(target.server.address, target.token);
  const rows = reader(target);
  const result = {};
  // A short warm-up of both graphs (JIT, caches, the code step's worker threads): 2 s each on 8 connections.
  const warmImmediate = await client.activeWorkflow(`${name} warm-up`, immediateGraph);
  await latencyLoop({
    origin: new URL(warmImmediate.hookUrl).origin,
    path: new URL(warmImmediate.hookUrl).pathname,
    method: 'POST',
    headers: { authorization: `Bearer ${warmImmediate.hookToken}`, 'content-type': 'application/json' },
    body: DELIVERY,
    connections: 8,
    duration: 2,
    expectStatus: 202,
  });
  const warmRespond = await client.activeWorkflow(`${name} respond warm-up`, respondGraph);
  await latencyLoop({
    origin: new URL(warmRespond.hookUrl).origin,
    path: new URL(warmRespond.hookUrl).pathname,
    method: 'POST',
    headers: { authorization: `Bearer ${warmRespond.hookToken}`, 'content-type': 'application/json' },
    body: DELIVERY,
    connections: 8,
    duration: 2,
    expectStatus: 200,
  });
  result.claimLight = await claimLatency(await client.activeWorkflow(`${name} light`, immediateGraph), rows);
  console.log(name, 'claim latency (light)', result.claimLight);
  result.immediate = await immediateThroughput(target, await client.activeWorkflow(`${name} immediate`, immediateGraph), rows);
  console.log(name, 'immediate', result.immediate);
  result.respond8 = await respondLatency(await client.activeWorkflow(`${name} respond`, respondGraph), target.cpuParts);
  console.log(name, 'respond_step at 8', result.respond8);
  // The process is warm by now: 5 s on the new workflow, then the measured window.
  result.respondOnly8 = await respondLatency(
    await client.activeWorkflow(`${name} respond only`, respondOnlyGraph),
    target.cpuParts,
    DURATION_S,
  );
  console.log(name, 'respond_step without a code step at 8', result.respondOnly8);
  rows.close?.();
  return result;
}

/**
 * A worker killed with SIGKILL while it runs executions: one worker alone takes TAKEOVER_EXECUTIONS
 * executions whose http step the local server holds, a second worker starts, the first is
 * killed, and the clock runs from the kill until the survivor has completed all of them.
 */
async function takeover(cluster, workers) {
  const held = [];
  const holder = http.createServer((req, res) => {
    if (req.url === '/hold') held.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${holder.address().port}`;
  // While the first worker holds them the server never answers; afterwards it answers at once.
  let holding = true;
  holder.removeAllListeners('request');
  holder.on('request', (req, res) => {
    if (holding) held.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  const client = apiClient(cluster.api.address, cluster.token);
  const flow = await client.activeWorkflow('takeover', {
    nodes: [
      node('hook', 'webhook', { response_mode: 'immediate' }),
      node('call', 'http', { url: `${base}/hold` }),
      node('done', 'set', { values: { ok: true } }),
    ],
    edges: [edge('hook', 'call'), edge('call', 'done')],
  });
  await workers[1].stop();
  for (let i = 0; i < TAKEOVER_EXECUTIONS; i += 1) {
    const response = await fetch(flow.hookUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${flow.hookToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    if (response.status !== 202) throw new Error(`delivery answered ${response.status}`);
  }
  while (held.length < TAKEOVER_EXECUTIONS) await sleep(20);
  const survivor = await startRole('worker', cluster.url);
  workers[1] = survivor;
  const leases = await cluster.db
    .selectFrom('executions')
    .select(['lease_expires_at'])
    .where('workflow_id', '=', flow.id)
    .where('status', '=', 'running')
    .execute();
  await workers[0].kill();
  const killedAt = Date.now();
  holding = false;
  const leaseLeftMs = Math.max(...leases.map((row) => Date.parse(row.lease_expires_at.slice(0, 23) + 'Z') - killedAt));
  let completed = 0;
  while (completed < TAKEOVER_EXECUTIONS && Date.now() - killedAt < 120_000) {
    await sleep(20);
    completed = Number(
      (
        await cluster.db
          .selectFrom('executions')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('workflow_id', '=', flow.id)
          .where('status', '=', 'completed')
          .executeTakeFirst()
      ).n,
    );
  }
  const doneMs = Date.now() - killedAt;
  const interrupted = await cluster.db
    .selectFrom('execution_steps')
    .innerJoin('executions', 'executions.id', 'execution_steps.workflow_execution_id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('executions.workflow_id', '=', flow.id)
    .where('execution_steps.node_id', '=', 'call')
    .where('execution_steps.status', '=', 'failed')
    .executeTakeFirst();
  for (const res of held) res.destroy();
  holder.closeAllConnections();
  holder.close();
  workers[0] = await startRole('worker', cluster.url);
  return {
    executions: TAKEOVER_EXECUTIONS,
    completed,
    killToAllCompletedMs: doneMs,
    leaseLeftAtKillMs: leaseLeftMs,
    leaseMs: DEFAULT_LEASE_MS,
    interruptedAttemptsRecorded: Number(interrupted.n),
  };
}

async function bare(script, label) {
  const server = await spawnServer(path.join(here, 'servers', script), [], { id: script });
  const origin = `http://127.0.0.1:${server.port}`;
  const loop = await latencyLoop({ origin, path: '/', method: 'GET', connections: 32, duration: DURATION_S, expectStatus: 200 });
  await server.stop();
  return { label, requestsPerSecond: round(loop.requestsPerSecond, 0), p99: round(quantile(loop.latenciesMs, 0.99)) };
}

async function main() {
  const loadBefore = machineFacts().loadAverage;
  const baselines = [
    await bare('bare-node-http.mjs', 'Bare node:http `GET /` (hello world JSON)'),
    await bare('bare-fastify.mjs', 'Bare Fastify 5 `GET /` (hello world)'),
  ];
  console.log('baselines', baselines);

  const bareHandoff = await measureBareHandoff({
    durationS: DURATION_S,
    settleS: RESPOND_SETTLE_S,
    lightDeliveries: LIGHT_DELIVERIES,
    delivery: DELIVERY,
  });

  const database = await clusterDatabase(`sy_bench_cluster_${process.pid}`);
  const api = await startRole('api', database.url, { SWITCHYARD_LOG_LEVEL: 'info' });
  const workers = [
    await startRole('worker', database.url, { SWITCHYARD_LOG_LEVEL: 'info' }),
    await startRole('worker', database.url, { SWITCHYARD_LOG_LEVEL: 'info' }),
  ];
  const cpuParts = { api: () => processCpuMs(api.pid), workers: () => sumCpu(workers.map((w) => w.pid)), postgres: postgresCpuMs };
  const cluster = { server: api, api, token: database.token, db: database.db, url: database.url, cpuParts };
  const clusterFigures = await measureTarget('cluster', cluster);
  const loadAfterCluster = machineFacts().loadAverage;
  clusterFigures.takeover = await takeover(cluster, workers);
  console.log('cluster takeover', clusterFigures.takeover);
  await Promise.allSettled([api.stop(), ...workers.map((w) => w.stop())]);
  await database.drop();

  const all = await startRole('all', null, { SWITCHYARD_LOG_LEVEL: 'info' });
  const sqliteFigures = await measureTarget('sqlite-all', {
    server: all,
    token: all.token,
    cpuParts: { all: () => processCpuMs(all.pid) },
  });
  await all.stop();
  const loadAfter = machineFacts().loadAverage;

  const result = {
    date: new Date().toISOString(),
    machine: machineFacts(),
    load: { before: loadBefore, afterCluster: loadAfterCluster, after: loadAfter },
    durationSeconds: DURATION_S,
    respondSettleSeconds: RESPOND_SETTLE_S,
    baselines,
    bareHandoff,
    cluster: clusterFigures,
    sqliteAll: sqliteFigures,
  };
  fs.mkdirSync(path.join(here, 'results'), { recursive: true });
  fs.writeFileSync(path.join(here, 'results', 'cluster.json'), JSON.stringify(result, null, 2) + '\n');
  fs.writeFileSync(path.join(here, 'results', 'cluster.md'), report(result));
  console.log(report(result));
}

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const coldOf = ({ respond8: { cold } }) => `${cold.p99} ms (${cold.p50} ms), ${cold.requestsPerSecond}/s`;
const onlyOf = ({ respondOnly8: only }) => `${only.p99} ms (${only.p50} ms), ${only.requestsPerSecond}/s`;
const cpuOf = ({ cpuPerDeliveryMs: cpu }) =>
  Object.entries(cpu)
    .map(([part, ms]) => `${part} ${ms}`)
    .join(', ') || 'n/a';

function report({ date, machine, load, durationSeconds, respondSettleSeconds, baselines, bareHandoff: bare, cluster, sqliteAll }) {
  const rows = [
    [
      'immediate webhook -> code: completed executions/s, 32 connections (in the load window; with the drain)',
      '>= 1,000/s',
      `${cluster.immediate.completedPerSecondInWindow}/s; ${cluster.immediate.completedPerSecondWithDrain}/s`,
      `${sqliteAll.immediate.completedPerSecondInWindow}/s; ${sqliteAll.immediate.completedPerSecondWithDrain}/s`,
      `${bare.immediate.completedPerSecondInWindow}/s; ${bare.immediate.completedPerSecondWithDrain}/s`,
      verdict(cluster.immediate.completedPerSecondInWindow >= 1000),
    ],
    [
      '  202 answers/s (same load)',
      '',
      `${cluster.immediate.answersPerSecond}/s`,
      `${sqliteAll.immediate.answersPerSecond}/s`,
      `${bare.immediate.answersPerSecond}/s`,
      'INFO',
    ],
    [
      'claim latency, commit -> first step start, one delivery at a time: p50',
      '<= 3 ms',
      `${cluster.claimLight.p50} ms`,
      `${sqliteAll.claimLight.p50} ms`,
      `${bare.claimLight.p50} ms`,
      verdict(cluster.claimLight.p50 <= 3),
    ],
    [
      '  p99',
      '<= 20 ms',
      `${cluster.claimLight.p99} ms`,
      `${sqliteAll.claimLight.p99} ms`,
      `${bare.claimLight.p99} ms`,
      verdict(cluster.claimLight.p99 <= 20),
    ],
    [
      'claim latency under the throughput load: p50 / p99',
      '',
      `${cluster.immediate.claimUnderLoadMs.p50} / ${cluster.immediate.claimUnderLoadMs.p99} ms`,
      `${sqliteAll.immediate.claimUnderLoadMs.p50} / ${sqliteAll.immediate.claimUnderLoadMs.p99} ms`,
      `${bare.immediate.claimUnderLoadMs.p50} / ${bare.immediate.claimUnderLoadMs.p99} ms`,
      'INFO',
    ],
    [
      'respond_step webhook -> code -> respond at 8 connections: p99 (p50)',
      '<= 15 ms',
      `${cluster.respond8.p99} ms (${cluster.respond8.p50} ms)`,
      `${sqliteAll.respond8.p99} ms (${sqliteAll.respond8.p50} ms)`,
      `${bare.respond8.p99} ms (${bare.respond8.p50} ms)`,
      verdict(cluster.respond8.p99 <= 15),
    ],
    [
      '  answers/s',
      '',
      `${cluster.respond8.requestsPerSecond}/s`,
      `${sqliteAll.respond8.requestsPerSecond}/s`,
      `${bare.respond8.requestsPerSecond}/s`,
      'INFO',
    ],
    [
      `  cold: the first ${durationSeconds} s of the same load: p99 (p50), answers/s`,
      '',
      coldOf(cluster),
      coldOf(sqliteAll),
      coldOf(bare),
      'INFO',
    ],
    ['  CPU per answer (ms), measured window', '', cpuOf(cluster.respond8), cpuOf(sqliteAll.respond8), cpuOf(bare.respond8), 'INFO'],
    [
      'respond_step webhook -> respond (no code step) at 8 connections: p99 (p50), answers/s',
      '',
      onlyOf(cluster),
      onlyOf(sqliteAll),
      'n/a (the row above has none)',
      'INFO',
    ],
    ['  CPU per answer (ms)', '', cpuOf(cluster.respondOnly8), cpuOf(sqliteAll.respondOnly8), '', 'INFO'],
    [
      `survivor finishes a SIGKILLed worker's ${cluster.takeover.executions} executions (default lease ${cluster.takeover.leaseMs / 1000} s), from the kill`,
      `<= lease + 2 s (${(cluster.takeover.leaseMs + 2000) / 1000} s)`,
      `${round(cluster.takeover.killToAllCompletedMs / 1000)} s (lease left at the kill: ${round(cluster.takeover.leaseLeftAtKillMs / 1000)} s)`,
      'n/a',
      'n/a',
      verdict(
        cluster.takeover.completed === cluster.takeover.executions &&
          cluster.takeover.killToAllCompletedMs <= cluster.takeover.leaseMs + 2000,
      ),
    ],
  ];
  return `# Cluster benchmark (issue 13)

\`npm run bench:cluster\` (bench/cluster.mjs), ${date}. ${machine.cores} cores (${machine.cpu}), Node ${machine.node}.
Load average ${load.before.join(' / ')} before, ${load.afterCluster.join(' / ')} after the cluster's loads, ${load.after.join(' / ')} at the end (1 / 5 / 15 min): this VM's own processes (the benchmark's, and what ran just before it). Other tenants of the host do not show in it, only in slower runs: read every figure beside the bare rows of the same run.

| measure | target | PostgreSQL: 1 api + 2 workers | SQLite: 1 \`serve --role all\` | bare PostgreSQL handoff (no Switchyard code) | result (cluster) |
| --- | --- | --- | --- | --- | --- |
${rows.map((row) => `| ${row.join(' | ')} |`).join('\n')}
${baselines.map((b) => `| ${b.label}, 32 connections | informational | ${b.requestsPerSecond}/s (p99 ${b.p99} ms) | | | INFO |`).join('\n')}

## How it was measured

- Processes: real \`node dist/main.js serve --role api|worker|all\` children at their defaults (log
  level info, lease 30 s, heartbeat 10 s, poll 1 s) but for both rate limits off; the cluster
  on a scratch PostgreSQL database of the local server; the SQLite process on a fresh data dir.
  The load generator (undici, keep-alive, one request at a time per connection) runs in this
  process on the same 2 cores. Before the loads, each target gets 2 s of deliveries on 8
  connections to a warm-up workflow of each graph (immediate, then respond_step), so the code
  paths of both are compiled and the code step's sandboxes are warm.
- Throughput: ${durationSeconds} s of deliveries on 32 connections to an \`immediate\` webhook -> code
  workflow; completed executions are counted from the database: those finished inside the load
  window / its length, and all of them / (load + drain).
- Claim latency: the code step's \`started_at\` minus the execution's \`inserted_at\` (written by
  the API process just before its commit; one machine, one clock), for ${cluster.claimLight.deliveries}
  deliveries sent one at a time, and for every execution of the throughput load.
- respond_step: 8 connections on a new respond_step workflow, latency from the request to the
  last byte of the answer, which the worker sends to the API process by NOTIFY. The load runs
  ${respondSettleSeconds} s before the measured ${durationSeconds} s window (steady state: in scratch rounds every
  process's CPU per delivery fell for the first 15-20 s of this load, JIT and caches settling);
  its first ${durationSeconds} s are reported as the cold row. The floor gets the same. CPU per answer: each
  part's user + system time from /proc over the measured window (all threads of the processes;
  \`postgres\`: every PostgreSQL server process of the machine, backends and WAL writer alike;
  \`loadGenerator\`: this benchmark's own process), divided by the answers.
- respond_step without a code step: the same load on a webhook -> respond workflow, ${durationSeconds} s after
  ${durationSeconds} s of warm-up on it: the respond path across processes without the code step's
  sandbox.
- Bare PostgreSQL handoff (bench/servers/bare-pg-handoff.mjs, run first): node:http + pg in an
  API process and two workers on a scratch database of the same server, the same three loads.
  A delivery is two autocommitted statements, one round trip each, as the cluster's hand-off
  makes it: the API's insert of the execution, already running under the lease of a worker
  picked at random, and its trigger's step row, with a NOTIFY to that worker carrying what it
  needs; then the worker's step rows, the execution's end and, for respond, the answer's NOTIFY.
  Nothing batched, no limits, no logs, no sandbox, no tokens: the least this design costs here,
  read as the floor of the cluster's figures (claim latency from its \`inserted_at\`, on the
  database's clock, to the worker's receipt of the notification, on the same machine's clock).
- Takeover: one worker alone takes ${cluster.takeover.executions} executions whose http step a local server
  holds; a second worker starts; the first is killed with SIGKILL and the server answers from
  then on; the time runs from the kill until all ${cluster.takeover.executions} are completed (${cluster.takeover.completed}
  were). It is bounded by what was left of the dead worker's lease at the kill (renewed every
  heartbeat, so between lease - heartbeat and lease) plus the next poll; ${cluster.takeover.interruptedAttemptsRecorded} attempts were
  recorded \`interrupted\` and ran again.
`;
}

await main();
