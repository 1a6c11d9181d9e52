#!/usr/bin/env node
// Run control (issue 37), as shipped: `switchyard serve` at its defaults on SQLite (rate limits
// counting but never refusing, lib/engine-servers.mjs). Measured so far:
//   1. bulk cancel: N executions (BENCH_BULK, default 1,000) waiting in a `wait` step of one
//      workflow, then one POST /api/v1/executions/cancel with {filter: {workflow_id: {eq}}}:
//      the time to its answer (which comes after every cancel committed), BENCH_ROUNDS rounds
//      (default 3), each on a workflow of its own. Target: within 1 s.
// Writes bench/results/run-control.{md,json}. Usage: npm run bench:run-control
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { apiClient } from './lib/api-client.mjs';
import { RATE_LIMITS } from './lib/engine-servers.mjs';
import { machineFacts } from './lib/machine.mjs';
import { spawnServe } from './lib/spawn-serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_BULK ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_MS = 1000;
const PARALLEL = 16;

async function waitingCount(call, workflowId) {
  const list = await call(
    'GET',
    `/api/v1/executions?filter[workflow_id][eq]=${workflowId}&filter[status][eq]=waiting&page[count]=true&page[limit]=1`,
  );
  return list.meta.count;
}

async function round(call, index) {
  const workflow = (await call('POST', '/api/v1/workflows', { data: { name: `Bulk ${index}` } })).data.id;
  const graph = {
    nodes: [
      { id: 'start', type: 'webhook', config: {} },
      { id: 'pause', type: 'wait', config: { duration_ms: 3_600_000 } },
    ],
    edges: [{ source: 'start', target: 'pause' }],
  };
  await call('PUT', `/api/v1/workflows/${workflow}/graph`, { data: { graph } });
  let started = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (started < N) {
        started++;
        await call('POST', `/api/v1/workflows/${workflow}/run`, { data: { draft: true } });
      }
    }),
  );
  const deadline = Date.now() + 120_000;
  while ((await waitingCount(call, workflow)) < N) {
    if (Date.now() > deadline) throw new Error(`${N} executions did not all reach waiting in 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const from = performance.now();
  const answer = await call('POST', '/api/v1/executions/cancel', { data: { filter: { workflow_id: { eq: workflow } } } });
  const ms = performance.now() - from;
  if (answer.acted !== N) throw new Error(`cancelled ${answer.acted} of ${N}: ${JSON.stringify(answer)}`);
  const left = await waitingCount(call, workflow);
  if (left !== 0) throw new Error(`${left} executions still waiting after the bulk cancel`);
  return { ms: Math.round(ms), answer };
}

const server = await spawnServe({ id: 'run-control', env: { ...RATE_LIMITS } });
const rounds = [];
try {
  const { call } = apiClient(server.baseUrl, server.token);
  for (let i = 1; i <= ROUNDS; i++) {
    const result = await round(call, i);
    console.log(`round ${i}: POST /executions/cancel of ${N} waiting executions answered in ${result.ms} ms`);
    rounds.push(result);
  }
} finally {
  await server.stop();
}

const worst = Math.max(...rounds.map((r) => r.ms));
const result = worst <= TARGET_MS ? 'PASS' : 'FAIL';
const report = {
  measured: new Date().toISOString(),
  machine: machineFacts(),
  executions: N,
  rounds: rounds.map((r) => r.ms),
  targetMs: TARGET_MS,
  result,
};
const md = [
  '# Run control benchmark',
  '',
  '| benchmark | process | goal | measured | result |',
  '| --- | --- | --- | --- | --- |',
  `| POST /executions/cancel of ${N.toLocaleString('en-US')} waiting executions (one filter): time to the answer | serve, SQLite | <= 1 s | ${rounds.map((r) => `${r.ms} ms`).join(' / ')} (${rounds.length} rounds; worst ${worst} ms) | ${result} |`,
  '',
  `Process: \`switchyard serve\` at its defaults (SQLite, log level \`info\`, log to a file), both rate limits at 10,000,000/min so the ${N.toLocaleString('en-US')} runs are not refused. Each round makes a workflow of its own (webhook -> wait 1 h), starts ${N.toLocaleString('en-US')} draft runs through \`POST /workflows/:id/run\` (${PARALLEL} at a time), waits until all are \`waiting\` (\`GET /executions?filter[status][eq]=waiting&page[count]=true\`), then times one \`POST /executions/cancel\` with \`{"data":{"filter":{"workflow_id":{"eq":…}}}}\` from send to answer; the answer comes after every cancel committed, and the count of waiting executions is checked to be 0 afterwards. Machine: ${report.machine.cores} cores (${report.machine.cpu}), Node ${report.machine.node}, load ${report.machine.loadAverage.join(' ')} at the end.`,
  '',
];
fs.writeFileSync(path.join(here, 'results', 'run-control.json'), `${JSON.stringify(report, null, 2)}\n`);
fs.writeFileSync(path.join(here, 'results', 'run-control.md'), md.join('\n'));
console.log(md.join('\n'));
process.exit(result === 'PASS' ? 0 : 1);
