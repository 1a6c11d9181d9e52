#!/usr/bin/env node
// Approval steps (issue 37), as shipped: `switchyard serve` at its defaults on SQLite.
//   1. N executions (BENCH_APPROVALS, default 10,000) of webhook -> approval (time-out 24 h) ->
//      set wait for a decision; then the server's CPU time is read over BENCH_IDLE_S seconds
//      (default 10) of idleness, beside the same reading before anything waited. Target: no CPU
//      while idle (no poll per waiting step): the two alike.
//   2. BENCH_DECISIONS of them (default 200), one at a time, are approved through
//      POST /executions/:id/steps/:step_id/decision; each is timed from sending the decision to a
//      `completed` status seen by polling GET /executions/:id every 1 ms. Target: p99 <= 50 ms.
// Writes bench/results/approvals.{md,json}. Usage: npm run bench:approvals
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiClient } from './lib/api-client.mjs';
import { RATE_LIMITS } from './lib/engine-servers.mjs';
import { machineFacts } from './lib/machine.mjs';
import { processCpuMs } from './lib/process-cpu.mjs';
import { spawnServe } from './lib/spawn-serve.mjs';
import { quantile } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_APPROVALS ?? 10_000);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 10);
const DECISIONS = Number(process.env.BENCH_DECISIONS ?? 200);
const PARALLEL = 16;
const P99_TARGET_MS = 50;

const server = await spawnServe({ id: 'approvals', env: { ...RATE_LIMITS } });
let idle;
let baseline;
const latencies = [];
/** The server's CPU over IDLE_S seconds in which nothing is sent. */
async function idleCpu() {
  const cpuBefore = processCpuMs(server.pid);
  const from = performance.now();
  await sleep(IDLE_S * 1000);
  const cpuAfter = processCpuMs(server.pid);
  return { seconds: (performance.now() - from) / 1000, cpuMs: cpuBefore === null ? null : cpuAfter - cpuBefore };
}
try {
  const { call } = apiClient(server.baseUrl, server.token);
  const workflow = (await call('POST', '/api/v1/workflows', { data: { name: 'Approvals' } })).data.id;
  const graph = {
    nodes: [
      { id: 'start', type: 'webhook', config: {} },
      { id: 'approve', type: 'approval', config: { message: 'Ship it?', timeout_ms: 86_400_000, on_timeout: 'reject' } },
      { id: 'done', type: 'set', config: { values: { shipped: true } } },
    ],
    edges: [
      { source: 'start', target: 'approve' },
      { source: 'approve', target: 'done', source_port: 'approved' },
    ],
  };
  await call('PUT', `/api/v1/workflows/${workflow}/graph`, { data: { graph, layout: false } });
  // The reference: the same server idle with nothing waiting.
  await sleep(2000);
  baseline = await idleCpu();
  const ids = [];
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (ids.length < N) {
        ids.push(null);
        const at = ids.length - 1;
        ids[at] = (await call('POST', `/api/v1/workflows/${workflow}/run`, { data: { draft: true } })).execution_id;
      }
    }),
  );
  const waitingCount = async () =>
    (await call('GET', `/api/v1/executions?filter[workflow_id][eq]=${workflow}&filter[status][eq]=waiting&page[count]=true&page[limit]=1`))
      .meta.count;
  const deadline = Date.now() + 600_000;
  while ((await waitingCount()) < N) {
    if (Date.now() > deadline) throw new Error(`${N} executions did not all reach waiting in 600 s`);
    await sleep(500);
  }
  // The decisions' step ids, read before anything is timed.
  const chosen = ids.slice(0, DECISIONS);
  const stepIds = [];
  for (const id of chosen) {
    const steps = await call('GET', `/api/v1/executions/${id}/steps?filter[node_id][eq]=approve&filter[status][eq]=waiting`);
    stepIds.push(steps.data[0].id);
  }
  // Idle: nothing is sent for IDLE_S seconds (after 2 s for the last writes to settle).
  await sleep(2000);
  idle = await idleCpu();

  for (let i = 0; i < chosen.length; i++) {
    const started = performance.now();
    await call('POST', `/api/v1/executions/${chosen[i]}/steps/${stepIds[i]}/decision`, { data: { decision: 'approve' } });
    for (;;) {
      const { attributes } = (await call('GET', `/api/v1/executions/${chosen[i]}?fields[execution]=status`)).data;
      if (attributes.status === 'completed') break;
      if (attributes.status === 'failed' || attributes.status === 'cancelled') throw new Error(`${chosen[i]} ${attributes.status}`);
      await sleep(1);
    }
    latencies.push(performance.now() - started);
  }
} finally {
  await server.stop();
}

const p50 = quantile(latencies, 0.5);
const p99 = quantile(latencies, 0.99);
const idleCpuPerSecond = idle.cpuMs === null ? null : idle.cpuMs / idle.seconds;
const baselineCpuPerSecond = baseline.cpuMs === null ? null : baseline.cpuMs / baseline.seconds;
// Waiting costs nothing when the server idles as it did with nothing waiting (one 10 ms tick a second of slack).
const idleResult = idleCpuPerSecond === null ? 'n/a' : idleCpuPerSecond <= baselineCpuPerSecond + 1 ? 'PASS' : 'FAIL';
const latencyResult = p99 <= P99_TARGET_MS ? 'PASS' : 'FAIL';
const report = {
  measured: new Date().toISOString(),
  machine: machineFacts(),
  waiting: N,
  idle,
  idleCpuMsPerSecond: idleCpuPerSecond,
  baseline,
  baselineCpuMsPerSecond: baselineCpuPerSecond,
  decisions: latencies.length,
  latencyMs: { p50, p99, max: Math.max(...latencies) },
};
const md = [
  '# Approvals benchmark',
  '',
  '| benchmark | process | goal | measured | result |',
  '| --- | --- | --- | --- | --- |',
  `| ${N.toLocaleString('en-US')} executions waiting for approval, idle: server CPU | serve, SQLite | no CPU while idle: as with nothing waiting | ${idle.cpuMs ?? 'n/a'} ms of CPU in ${idle.seconds.toFixed(1)} s (${idleCpuPerSecond === null ? 'n/a' : idleCpuPerSecond.toFixed(2)} ms/s); nothing waiting, same server: ${baseline.cpuMs ?? 'n/a'} ms in ${baseline.seconds.toFixed(1)} s (${baselineCpuPerSecond === null ? 'n/a' : baselineCpuPerSecond.toFixed(2)} ms/s) | ${idleResult} |`,
  `| decision -> execution completed (${latencies.length} decisions, one at a time, ${N.toLocaleString('en-US')} waiting) | serve, SQLite | p99 <= 50 ms | p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms | ${latencyResult} |`,
  '',
  `Process: \`switchyard serve\` at its defaults (SQLite, log level \`info\`, log to a file), both rate limits at 10,000,000/min. ${N.toLocaleString('en-US')} draft runs of webhook -> approval (time-out 24 h, on_timeout reject) -> set are started through \`POST /workflows/:id/run\` (${PARALLEL} at a time) and counted \`waiting\`; the server's CPU time (user + system, /proc, in 10 ms ticks) is read across ${IDLE_S} s in which nothing is sent, and compared with the same reading taken on the same server before any run started (the reference: its timers with nothing waiting); the target holds when the two differ by at most one tick a second. Then ${DECISIONS} of them are approved one at a time (\`POST /executions/:id/steps/:step_id/decision\`, step ids read beforehand), each timed from sending the decision to a \`completed\` status seen by polling \`GET /executions/:id\` every 1 ms, so the figure includes the decision's commit, the wake, the run of the remaining steps, their commit and up to one poll. Machine: ${report.machine.cores} cores (${report.machine.cpu}), Node ${report.machine.node}, load ${report.machine.loadAverage.join(' ')} at the end.`,
  '',
];
fs.writeFileSync(path.join(here, 'results', 'approvals.json'), `${JSON.stringify(report, null, 2)}\n`);
fs.writeFileSync(path.join(here, 'results', 'approvals.md'), md.join('\n'));
console.log(md.join('\n'));
process.exit(idleResult !== 'FAIL' && latencyResult === 'PASS' ? 0 : 1);
