// `npm run bench`: the foundation benchmark. Builds nothing itself (the npm script runs
// `npm run build` first), then measures each target in turn against a server in its own child
// process and writes bench/results/foundation.{md,json}. See bench/README.md.
/* global fetch */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServer } from './lib/spawn-server.mjs';
import { measure } from './lib/load.mjs';
import { writeReport } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CONNECTIONS = 10;
const WORKFLOWS = 10_000;
const DURATION = seconds('BENCH_DURATION', 5);
const WARMUP = seconds('BENCH_WARMUP', 3);
const ROUNDS = seconds('BENCH_ROUNDS', 3);
/** BENCH_CPU_PROF=1: each server child runs under `node --cpu-prof`; profiles land here. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF === '1' ? path.join(here, 'results', 'profiles') : undefined;

function seconds(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of seconds (at least 1), got "${raw}"`);
  return value;
}

const SWITCHYARD = path.join(here, 'servers', 'switchyard.mjs');
const TARGETS = [
  { id: 'bare', label: 'Bare Fastify 5 `GET /` (hello world)', script: path.join(here, 'servers', 'bare-fastify.mjs'), args: [], path: '/', check: (body) => body.hello === 'world' },
  { id: 'me', label: '`GET /api/v1/me`', script: SWITCHYARD, args: ['0'], path: '/api/v1/me', check: (body) => body.data?.type === 'user' },
  {
    id: 'workflows',
    label: `\`GET /api/v1/workflows\` (first page of ${WORKFLOWS.toLocaleString('en-US')})`,
    script: SWITCHYARD,
    args: [String(WORKFLOWS)],
    path: '/api/v1/workflows',
    check: (body) => body.data?.length === 50 && typeof body.links?.next === 'string',
  },
  {
    id: 'workflows-uncached',
    label: `\`GET /api/v1/workflows\` without the list cache (informational)`,
    script: SWITCHYARD,
    args: [String(WORKFLOWS), 'uncached'],
    path: '/api/v1/workflows',
    check: (body) => body.data?.length === 50 && typeof body.links?.next === 'string',
  },
];

const percent = (value) => `${(value * 100).toFixed(1)}%`;
const GOALS = [
  { target: 'me', short: 'ratio', goal: 'req/s at least 50% of bare Fastify', evaluate: (r) => ({ measured: percent(r.ratio), pass: r.ratio >= 0.5 }) },
  { target: 'workflows', short: 'ratio', goal: 'req/s at least 25% of bare Fastify', evaluate: (r) => ({ measured: percent(r.ratio), pass: r.ratio >= 0.25 }) },
  { target: 'workflows', short: 'p99', goal: `p99 under 20 ms at ${CONNECTIONS} connections`, evaluate: (r) => ({ measured: `${r.p99} ms`, pass: r.p99 < 20 }) },
];

/** One request before the load: the answer must be 200 with the expected body, or the run is void. */
async function verify(target, url, headers) {
  const response = await fetch(url, { headers });
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status !== 200 || !body || !target.check(body)) throw new Error(`${target.id}: unexpected answer ${response.status} ${text.slice(0, 300)}`);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// All servers start once and stay up; the targets are then measured in turn, ROUNDS times. Each
// round's ratios compare with that round's bare run, and the medians are reported: this shared
// 2-core machine drifts by tens of percent between minutes, far more than a round takes.
const results = {};
const servers = {};
try {
  for (const target of TARGETS) {
    const server = await spawnServer(target.script, target.args, { name: target.id, profileDir: PROFILE_DIR });
    servers[target.id] = server;
    const url = `http://127.0.0.1:${server.port}${target.path}`;
    const headers = server.token ? { authorization: `Bearer ${server.token}`, accept: 'application/vnd.api+json' } : {};
    await verify(target, url, headers);
    server.target = { url, headers };
  }
  const rounds = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const measured = {};
    for (const target of TARGETS) {
      const { url, headers } = servers[target.id].target;
      process.stdout.write(`round ${round}/${ROUNDS} ${target.id}: ${round === 1 ? `warm-up ${WARMUP} s, ` : ''}measured ${DURATION} s ... `);
      const result = await measure({ label: target.id, url, headers, connections: CONNECTIONS, duration: DURATION, warmup: round === 1 ? WARMUP : 0 });
      measured[target.id] = result;
      console.log(`${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms`);
    }
    for (const result of Object.values(measured)) result.ratio = result.requestsPerSecond / measured.bare.requestsPerSecond;
    rounds.push(measured);
  }
  for (const target of TARGETS) {
    const all = rounds.map((round) => round[target.id]);
    results[target.id] = {
      label: target.label,
      path: target.path,
      requestsPerSecond: median(all.map((r) => r.requestsPerSecond)),
      p50: median(all.map((r) => r.p50)),
      p99: median(all.map((r) => r.p99)),
      worstP99: Math.max(...all.map((r) => r.p99)),
      ratio: median(all.map((r) => r.ratio)),
      rounds: all.map(({ requestsPerSecond, p50, p99, ratio, requests, errors, timeouts, non2xx }) => ({ requestsPerSecond, p50, p99, ratio, requests, errors, timeouts, non2xx })),
      seeded: servers[target.id].seeded,
    };
  }
} finally {
  for (const server of Object.values(servers)) await server.stop();
}

const goals = GOALS.map((goal) => ({ target: goal.target, short: goal.short, goal: goal.goal, ...goal.evaluate(results[goal.target]) }));
console.log('');
for (const goal of goals) console.log(`${goal.pass ? 'PASS' : 'FAIL'}  ${goal.target}: ${goal.goal} (measured ${goal.measured})`);

const cpus = os.cpus();
const machine = {
  cpu: cpus[0]?.model ?? 'unknown',
  cores: cpus.length,
  node: process.version,
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  memoryGb: Math.round(os.totalmem() / 2 ** 30),
};
const settings = { date: new Date().toISOString(), durationSeconds: DURATION, warmupSeconds: WARMUP, rounds: ROUNDS, connections: CONNECTIONS, workflows: WORKFLOWS };
if (PROFILE_DIR) {
  // A profiled server is slower: keep those numbers out of the recorded results.
  console.log(`\nCPU profiles in ${path.relative(process.cwd(), PROFILE_DIR)} (summarise: node bench/profile-summary.mjs <file>); results not written`);
} else {
  const written = writeReport(path.join(here, 'results'), { machine, settings, results, goals });
  console.log(`\nWrote ${written.map((file) => path.relative(process.cwd(), file)).join(' and ')}`);
}
