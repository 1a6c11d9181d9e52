// `npm run bench:map`: how long GET /api/v1/workflows/map takes at 2,000 workflows on the
// shipped `switchyard serve` (lib/spawn-serve.mjs: a fresh data dir, embedded SQLite, logging on).
// The workspace is built through the API, as users build it, so the call graph is recorded by
// the product itself: 40 folders; 2,000 workflows in systems of 2 to 24 (chains, diamonds, a
// cycle every tenth system), a few hundred standalone, a quarter of the callers active. Then
// sequential requests (one in flight: the latency a person opening the map sees) of the whole
// map, a search and a status filter. Writes bench/results/map.{md,json}. The goal: under 100 ms.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { apiClient } from './lib/api-client.mjs';
import { spawnServe } from './lib/spawn-serve.mjs';
import { machineFacts } from './lib/machine.mjs';
import { codeVersion, describeCode } from './lib/code-version.mjs';
import { summary } from './lib/stats.mjs';

/* global fetch */
const here = path.dirname(fileURLToPath(import.meta.url));
const WORKFLOWS = Number(process.env.BENCH_MAP_WORKFLOWS || 2000);
const REQUESTS = Number(process.env.BENCH_MAP_REQUESTS || 200);
const GOAL_MS = 100;
const PARALLEL = 8;

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool(items, limit, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

/** The systems: sizes cycling through a mix, shapes by position. */
function plan(count) {
  const sizes = [2, 3, 4, 6, 8, 12, 24, 1, 1, 1];
  const systems = [];
  let left = count;
  for (let s = 0; left > 0; s++) {
    const size = Math.min(sizes[s % sizes.length], left);
    systems.push({ size, shape: size === 1 ? 'standalone' : s % 10 === 0 ? 'cycle' : s % 3 === 0 ? 'diamond' : 'chain' });
    left -= size;
  }
  return systems;
}

/** Callee indexes (within the system) of member `i`. */
function calleesOf(shape, size, i) {
  if (shape === 'standalone') return [];
  if (shape === 'chain') return i + 1 < size ? [i + 1] : [];
  if (shape === 'cycle') return [(i + 1) % size];
  // diamond: each member calls the next two, so joins appear
  return [i + 1, i + 2].filter((j) => j < size);
}

const caller = (targets) => ({
  nodes: [
    { id: 'hook', type: 'webhook', config: {}, position: { x: 0, y: 0 } },
    ...targets.map((id, i) => ({ id: `call_${i}`, type: 'call_workflow', config: { workflow_id: id }, position: { x: 300, y: i * 100 } })),
    { id: 'done', type: 'set', config: { values: { ok: true } }, position: { x: 600, y: 0 } },
  ],
  edges: [...targets.map((_, i) => ({ source: 'hook', target: `call_${i}` })), { source: 'hook', target: 'done' }],
});

/** The server's CPU time so far (user + system, ms) from /proc; null where there is no /proc. */
function cpuMs(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in ticks of 1/100 s
  } catch {
    return null;
  }
}

async function timed(url, headers, count, pid) {
  const times = [];
  let bytes = 0;
  const cpuBefore = cpuMs(pid);
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(url, { headers });
    const text = await response.text();
    times.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
    bytes = text.length;
  }
  const cpuAfter = cpuMs(pid);
  return { ...summary(times, 2), bytes, serverCpuMs: cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / count };
}

const server = await spawnServe({ id: 'map', env: { SWITCHYARD_API_RATE_LIMIT: '10000000', SWITCHYARD_WEBHOOK_RATE_LIMIT: '10000000' } });
let result;
try {
  const api = apiClient(server.baseUrl, server.token);
  const call = async (method, route, body) => {
    const response = await fetch(`${server.baseUrl}${route}`, {
      method,
      headers: api.headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${route} answered ${response.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  const buildStarted = performance.now();
  const folders = [];
  for (let f = 0; f < 40; f++) folders.push((await call('POST', '/api/v1/folders', { data: { name: `Team ${f}` } })).data.id);
  const systems = plan(WORKFLOWS);
  const members = [];
  systems.forEach((system, s) => {
    for (let i = 0; i < system.size; i++)
      members.push({
        system: s,
        index: i,
        name: `${system.shape} ${s} member ${i}`,
        folder: folders[(s + (i === system.size - 1 && i > 0 ? 1 : 0)) % folders.length],
      });
  });
  await pool(members, PARALLEL, async (member) => {
    member.id = (await call('POST', '/api/v1/workflows', { data: { name: member.name, folder_id: member.folder } })).data.id;
  });
  const bySystem = systems.map((_, s) => members.filter((m) => m.system === s));
  let calls = 0;
  await pool(members, PARALLEL, async (member) => {
    const system = systems[member.system];
    const targets = calleesOf(system.shape, system.size, member.index).map((j) => bySystem[member.system][j].id);
    calls += targets.length;
    await api.putGraph(member.id, caller(targets));
  });
  const callers = members.filter((m) => calleesOf(systems[m.system].shape, systems[m.system].size, m.index).length > 0);
  await pool(
    callers.filter((_, i) => i % 4 === 0),
    PARALLEL,
    (member) => api.activate(member.id),
  );
  const buildMs = Math.round(performance.now() - buildStarted);

  const headers = { authorization: `Bearer ${server.token}`, accept: 'application/json' };
  const base = `${server.baseUrl}/api/v1/workflows/map`;
  const check = await (await fetch(base, { headers })).json();
  const mapped = check.systems.reduce((n, s) => n + s.columns.reduce((m, c) => m + c.length, 0), 0) + check.standalone.length;
  if (mapped !== WORKFLOWS) throw new Error(`the map holds ${mapped} workflows, not ${WORKFLOWS}`);
  await timed(base, headers, 20, server.pid);
  const rows = {
    'whole map': await timed(base, headers, REQUESTS, server.pid),
    'search=member 1': await timed(`${base}?search=${encodeURIComponent('member 1')}`, headers, REQUESTS, server.pid),
    'status=active': await timed(`${base}?status=active`, headers, REQUESTS, server.pid),
  };
  result = {
    workflows: WORKFLOWS,
    calls,
    systems: check.systems.length,
    standalone: check.standalone.length,
    cycles: check.systems.filter((s) => s.cycles.length > 0).length,
    buildMs,
    requests: REQUESTS,
    rows,
    goalMs: GOAL_MS,
    pass: Object.values(rows).every((row) => row.p99 < GOAL_MS),
  };
} finally {
  await server.stop();
}

const machine = machineFacts();
const code = codeVersion();
const ms = (value) => value.toFixed(2);
const lines = [
  '# Workspace map at 2,000 workflows',
  '',
  `Measured by \`npm run bench:map\` (bench/map.mjs) on ${new Date().toISOString().slice(0, 10)}${describeCode(code)}: \`${server.command}\`, a fresh data dir (embedded SQLite), log level info, rate limits counting but never refusing.`,
  `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}, load average ${machine.loadAverage.join(' ')}.`,
  '',
  `The workspace was built through the API in ${(result.buildMs / 1000).toFixed(1)} s: ${result.workflows} workflows in 40 folders, ${result.calls} calls (chains, diamonds, cycles), ${result.systems} systems (${result.cycles} with a cycle) and ${result.standalone} standalone workflows, a quarter of the callers active. Then ${result.requests} sequential requests per row (one in flight, after 20 to warm up), timed by the client from send to the last byte.`,
  '',
  '| request | p50 ms | p90 ms | p99 ms | max ms | server CPU ms per request | answer bytes |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...Object.entries(result.rows).map(
    ([name, row]) =>
      `| ${name} | ${ms(row.p50)} | ${ms(row.p90)} | ${ms(row.p99)} | ${ms(row.max)} | ${row.serverCpuMs === null ? 'n/a' : ms(row.serverCpuMs)} | ${row.bytes.toLocaleString('en')} |`,
  ),
  '',
  `Goal: under ${GOAL_MS} ms at p99: ${result.pass ? 'PASS' : 'FAIL'}.`,
  '',
  "Server CPU ms per request is the serve process's user + system time (/proc) over the row divided by its requests: what one answer costs whatever else the machine runs; the latencies also hold the time the process waited for a core (see the load average above).",
  '',
  'Why it is fast: the calls are rows (`workflow_calls`, written with the graphs that hold them), so the map reads 2,000 short workflow rows, the call rows and the folder names in three indexed queries, with no join, and lays them out in memory over members numbered in name order (src/graph/workflow-map.ts); no graph is parsed per request, and the answer is one JSON.stringify.',
  '',
];
fs.mkdirSync(path.join(here, 'results'), { recursive: true });
fs.writeFileSync(path.join(here, 'results', 'map.md'), lines.join('\n'));
fs.writeFileSync(
  path.join(here, 'results', 'map.json'),
  `${JSON.stringify({ machine, code, command: server.command, ...result }, null, 2)}\n`,
);
console.log(lines.join('\n'));
if (!result.pass) process.exitCode = 1;
