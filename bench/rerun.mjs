#!/usr/bin/env node
// Re-run from a step (issue 37), as shipped: `switchyard serve` at its defaults on SQLite.
// A 100-step execution (webhook -> 100 `set` steps in a chain) is re-run from step k
// (POST /executions/:id/rerun {from_node_id: "s<k>"}), beside its reference: a fresh run of a
// workflow made of only the steps that remain (webhook -> 101-k steps). The target: the re-run
// costs what running the remaining steps costs plus one commit for the k reused records.
// Each round measures both for every k, alternating which goes first, BENCH_ROUNDS rounds
// (default 7). Two figures for each: server time (the execution's finished_at - inserted_at,
// which covers the commit that creates it with its copies) and the time from the request to a
// completed status seen by polling GET /executions/:id every 2 ms.
// Writes bench/results/rerun.{md,json}. Usage: npm run bench:rerun
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiClient } from './lib/api-client.mjs';
import { RATE_LIMITS } from './lib/engine-servers.mjs';
import { machineFacts } from './lib/machine.mjs';
import { spawnServe } from './lib/spawn-serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const STEPS = 100;
const KS = [10, 50, 90];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

/** webhook -> s<first> -> … -> s100, each `set` step adding its number to what it was given. */
function chain(first) {
  const nodes = [{ id: 'start', type: 'webhook', config: {} }];
  const edges = [];
  let previous = 'start';
  for (let i = first; i <= STEPS; i++) {
    nodes.push({ id: `s${i}`, type: 'set', config: { values: { [`v${i}`]: i } } });
    edges.push({ source: previous, target: `s${i}` });
    previous = `s${i}`;
  }
  return { nodes, edges };
}

async function workflow(call, name, graph) {
  const id = (await call('POST', '/api/v1/workflows', { data: { name } })).data.id;
  await call('PUT', `/api/v1/workflows/${id}/graph`, { data: { graph, layout: false } });
  return id;
}

/** Polls until the execution ended; answers both figures. */
async function completion(call, id, from) {
  for (;;) {
    const { attributes } = (await call('GET', `/api/v1/executions/${id}?fields[execution]=status,inserted_at,finished_at`)).data;
    if (attributes.status === 'completed') {
      const client = performance.now() - from;
      const server = (Date.parse(attributes.finished_at) - Date.parse(attributes.inserted_at)) / 1000;
      // RFC 3339 with microseconds: Date.parse keeps milliseconds; the microseconds come from the text.
      const micros = (text) => Number(text.slice(20, 26));
      const serverMs = server * 1000 + (micros(attributes.finished_at) % 1000) / 1000 - (micros(attributes.inserted_at) % 1000) / 1000;
      return { client, server: serverMs };
    }
    if (attributes.status === 'failed' || attributes.status === 'cancelled') throw new Error(`execution ${id} ${attributes.status}`);
    await sleep(2);
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const server = await spawnServe({ id: 'rerun', env: { ...RATE_LIMITS } });
const samples = Object.fromEntries(KS.map((k) => [k, { rerun: [], fresh: [] }]));
try {
  const { call } = apiClient(server.baseUrl, server.token);
  const full = await workflow(call, 'Chain of 100', chain(1));
  const remaining = Object.fromEntries(await Promise.all(KS.map(async (k) => [k, await workflow(call, `Steps ${k}-100`, chain(k))])));
  const source = (await call('POST', `/api/v1/workflows/${full}/run`, { data: { draft: true, input: { n: 1 } } })).execution_id;
  await completion(call, source, performance.now());
  const rerun = async (k) => {
    const from = performance.now();
    const { execution_id } = await call('POST', `/api/v1/executions/${source}/rerun`, { data: { from_node_id: `s${k}` } });
    return completion(call, execution_id, from);
  };
  const fresh = async (k) => {
    const from = performance.now();
    const { execution_id } = await call('POST', `/api/v1/workflows/${remaining[k]}/run`, { data: { draft: true, input: { n: 1 } } });
    return completion(call, execution_id, from);
  };
  // Warm-up: plans cached, draft snapshots made.
  for (const k of KS) {
    await rerun(k);
    await fresh(k);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const k of KS) {
      const order = round % 2 === 0 ? ['rerun', 'fresh'] : ['fresh', 'rerun'];
      for (const kind of order) samples[k][kind].push(await (kind === 'rerun' ? rerun(k) : fresh(k)));
    }
  }
} finally {
  await server.stop();
}

const rows = KS.map((k) => {
  const r = samples[k].rerun;
  const f = samples[k].fresh;
  const figure = (list, key) => median(list.map((s) => s[key]));
  return {
    k,
    reused: k,
    ran: STEPS - k + 1,
    rerunServerMs: figure(r, 'server'),
    freshServerMs: figure(f, 'server'),
    rerunClientMs: figure(r, 'client'),
    freshClientMs: figure(f, 'client'),
  };
});
const fmt = (ms) => `${ms.toFixed(1)} ms`;
const report = { measured: new Date().toISOString(), machine: machineFacts(), steps: STEPS, rounds: ROUNDS, rows, samples };
const md = [
  '# Re-run from a step benchmark',
  '',
  '| re-run from | records reused (one commit) | steps run | re-run: server / seen | remaining steps alone: server / seen | re-run - alone (server) |',
  '| --- | ---: | ---: | --- | --- | --- |',
  ...rows.map(
    (r) =>
      `| s${r.k} of ${STEPS} | ${r.reused} (trigger + ${r.k - 1} steps) | ${r.ran} | ${fmt(r.rerunServerMs)} / ${fmt(r.rerunClientMs)} | ${fmt(r.freshServerMs)} / ${fmt(r.freshClientMs)} | ${fmt(r.rerunServerMs - r.freshServerMs)} |`,
  ),
  '',
  `Process: \`switchyard serve\` at its defaults (SQLite, log level \`info\`, log to a file), both rate limits at 10,000,000/min. One execution of webhook -> s1 … s${STEPS} (\`set\` steps in a chain, draft run) is the source; each measurement re-runs it from s<k> (\`POST /executions/:id/rerun\`), beside a fresh draft run of a workflow holding only s<k> … s${STEPS}. Medians of ${ROUNDS} rounds after one warm-up of each, the two alternating which goes first. "server": the new execution's \`finished_at - inserted_at\` (from the commit that creates it, with the re-run's copied records, to its end); "seen": from sending the request to a \`completed\` status seen by polling \`GET /executions/:id\` every 2 ms. The copied records go in the execution's creating commit (engine.rerun -> scheduler.admit), so the difference is that one commit's extra rows plus reading the source's records. Machine: ${report.machine.cores} cores (${report.machine.cpu}), Node ${report.machine.node}, load ${report.machine.loadAverage.join(' ')} at the end.`,
  '',
];
fs.writeFileSync(path.join(here, 'results', 'rerun.json'), `${JSON.stringify(report, null, 2)}\n`);
fs.writeFileSync(path.join(here, 'results', 'rerun.md'), md.join('\n'));
console.log(md.join('\n'));
