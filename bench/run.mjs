// `npm run bench`: the foundation benchmark. Builds nothing itself (the npm script runs
// `npm run build` first); starts every target's server in a child process (the shipped
// `switchyard serve` at its defaults, the bare node:http and Fastify baselines, the in-process
// wiring as an extra), measures them in turn over rounds, and writes
// bench/results/foundation.{md,json}. See bench/README.md.
/* global fetch */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServer } from './lib/spawn-server.mjs';
import { spawnServe, stopAll } from './lib/spawn-serve.mjs';
import { measure } from './lib/load.mjs';
import { writeReport } from './lib/report.mjs';
import { machineFacts } from './lib/machine.mjs';
import { codeVersion } from './lib/code-version.mjs';
import { inProcessRows, wholeNumber } from './lib/env-number.mjs';
import { median } from './lib/stats.mjs';
import { uncachedListPaths } from './lib/uncached-list-paths.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CONNECTIONS = 10;
const WORKFLOWS = 10_000;
const DURATION = wholeNumber('BENCH_DURATION', 5);
const WARMUP = wholeNumber('BENCH_WARMUP', 3);
const ROUNDS = wholeNumber('BENCH_ROUNDS', 3);
/** BENCH_CPU_PROF=1: each server child runs under `node --cpu-prof`; profiles and summaries land here. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF === '1' ? path.join(here, 'results', 'profiles') : undefined;

/** The API limiter on and counting, as in production, but never refusing (the default 600/min would refuse nearly every request). */
const LIMITER_ON = { SWITCHYARD_API_RATE_LIMIT: '10000000' };
const LIMITER_OFF = { SWITCHYARD_API_RATE_LIMIT: '0' };
const UNCACHED_PATHS = uncachedListPaths();

const hello = (body) => body.hello === 'world';
const isMe = (body) => body.data?.type === 'user';
const isFirstPage = (body) => body.data?.length === 50 && typeof body.links?.next === 'string';
const SWITCHYARD = path.join(here, 'servers', 'switchyard.mjs');
const workflows = WORKFLOWS.toLocaleString('en-US');

/** `process`: bare (baselines), serve (what users run; the goals), in-process (extra rows). */
const TARGETS = [
  {
    id: 'node-http',
    process: 'bare',
    label: 'Bare node:http `GET /` (hello world JSON)',
    script: path.join(here, 'servers', 'bare-node-http.mjs'),
    path: '/',
    check: hello,
  },
  {
    id: 'bare',
    process: 'bare',
    label: 'Bare Fastify 5 `GET /` (hello world)',
    script: path.join(here, 'servers', 'bare-fastify.mjs'),
    path: '/',
    check: hello,
  },
  {
    id: 'me',
    process: 'serve',
    label: '`GET /api/v1/me`, API rate limiter on at 10,000,000/min (counting, never refusing)',
    env: LIMITER_ON,
    path: '/api/v1/me',
    check: isMe,
  },
  {
    id: 'me-limiter-off',
    process: 'serve',
    label: "`GET /api/v1/me`, API rate limiter off (`SWITCHYARD_API_RATE_LIMIT=0`; informational: the limiter's cost)",
    env: LIMITER_OFF,
    path: '/api/v1/me',
    check: isMe,
  },
  {
    id: 'workflows',
    process: 'serve',
    label: `\`GET /api/v1/workflows\` (first page of ${workflows}), API rate limiter on at 10,000,000/min`,
    env: LIMITER_ON,
    seed: WORKFLOWS,
    path: '/api/v1/workflows',
    check: isFirstPage,
  },
  {
    id: 'workflows-uncached',
    process: 'serve',
    label: `The same list page with the list cache never hitting (${UNCACHED_PATHS.length.toLocaleString('en-US')} spellings of \`?page[limit]=50\` in turn; informational)`,
    env: LIMITER_ON,
    seed: WORKFLOWS,
    path: UNCACHED_PATHS[0],
    paths: UNCACHED_PATHS,
    check: isFirstPage,
  },
  ...(inProcessRows()
    ? [
        {
          id: 'in-process-me',
          process: 'in-process',
          label: '`GET /api/v1/me`, rate limiter off',
          script: SWITCHYARD,
          args: ['0'],
          path: '/api/v1/me',
          check: isMe,
        },
        {
          id: 'in-process-workflows',
          process: 'in-process',
          label: `\`GET /api/v1/workflows\` (first page of ${workflows}), rate limiter off`,
          script: SWITCHYARD,
          args: [String(WORKFLOWS)],
          path: '/api/v1/workflows',
          check: isFirstPage,
        },
      ]
    : []),
];

const percent = (value) => `${(value * 100).toFixed(1)}%`;
/** Judged on the serve rows only. */
const GOALS = [
  {
    target: 'me',
    short: 'ratio',
    goal: 'req/s at least 50% of bare Fastify',
    evaluate: (r) => ({ measured: percent(r.ratio), pass: r.ratio >= 0.5 }),
  },
  {
    target: 'workflows',
    short: 'ratio',
    goal: 'req/s at least 25% of bare Fastify',
    evaluate: (r) => ({ measured: percent(r.ratio), pass: r.ratio >= 0.25 }),
  },
  {
    target: 'workflows',
    short: 'p99',
    goal: `p99 under 20 ms at ${CONNECTIONS} connections`,
    evaluate: (r) => ({ measured: `${r.p99} ms`, pass: r.p99 < 20 }),
  },
];

function start(target) {
  if (target.process === 'serve') return spawnServe({ id: target.id, env: target.env, seed: target.seed ?? null, profileDir: PROFILE_DIR });
  return spawnServer(target.script, target.args ?? [], { id: target.id, profileDir: PROFILE_DIR });
}

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
  if (response.status !== 200 || !body || !target.check(body))
    throw new Error(`${target.id}: unexpected answer ${response.status} ${text.slice(0, 300)}`);
}

// All servers start once and stay up; the targets are then measured in turn, ROUNDS times. Each
// round's ratios compare with that round's bare runs, and the medians are reported: this shared
// 2-core machine drifts by tens of percent between minutes, far more than a round takes.
const machine = machineFacts();
const results = {};
const servers = {};
let stopped = {};
let failed = null;
try {
  for (const target of TARGETS) {
    process.stdout.write(`starting ${target.id} ... `);
    const server = await start(target);
    servers[target.id] = server;
    const url = `${server.baseUrl}${target.path}`;
    const headers = server.token ? { authorization: `Bearer ${server.token}`, accept: 'application/vnd.api+json' } : {};
    await verify(target, url, headers);
    // The cache-busting spellings must all answer the same page: check one from the far end too.
    if (target.paths) await verify(target, `${server.baseUrl}${target.paths.at(-1)}`, headers);
    server.target = { url, headers, served: target.paths ? 2 : 1 };
    console.log(`listening on ${server.port}${server.command ? ` (${server.command})` : ''}`);
  }
  const rounds = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const measured = {};
    for (const target of TARGETS) {
      const server = servers[target.id];
      const { url, headers } = server.target;
      process.stdout.write(
        `round ${round}/${ROUNDS} ${target.id}: ${round === 1 ? `warm-up ${WARMUP} s, ` : ''}measured ${DURATION} s ... `,
      );
      const result = await measure({
        label: target.id,
        url,
        headers,
        connections: CONNECTIONS,
        duration: DURATION,
        warmup: round === 1 ? WARMUP : 0,
        paths: target.paths,
      });
      server.target.served += result.requests + result.warmupRequests;
      server.loadSpans.push(result.span);
      measured[target.id] = result;
      console.log(`${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms`);
    }
    for (const result of Object.values(measured)) {
      result.ratio = result.requestsPerSecond / measured.bare.requestsPerSecond;
      result.ratioNodeHttp = result.requestsPerSecond / measured['node-http'].requestsPerSecond;
    }
    rounds.push(measured);
  }
  for (const target of TARGETS) {
    const all = rounds.map((round) => round[target.id]);
    results[target.id] = {
      label: target.label,
      process: target.process,
      path: target.path,
      env: target.env ?? null,
      requestsPerSecond: median(all.map((r) => r.requestsPerSecond)),
      p50: median(all.map((r) => r.p50)),
      p99: median(all.map((r) => r.p99)),
      worstP99: Math.max(...all.map((r) => r.p99)),
      ratio: median(all.map((r) => r.ratio)),
      ratioNodeHttp: median(all.map((r) => r.ratioNodeHttp)),
      rounds: all.map(({ requestsPerSecond, p50, p99, ratio, ratioNodeHttp, requests, errors, timeouts, non2xx }) => ({
        requestsPerSecond,
        p50,
        p99,
        ratio,
        ratioNodeHttp,
        requests,
        errors,
        timeouts,
        non2xx,
      })),
      seeded: servers[target.id].seeded ?? null,
      command: servers[target.id].command ?? null,
      requestsServed: servers[target.id].target.served,
    };
  }
} catch (error) {
  failed = error;
}
console.log('stopping the servers (serve: SIGTERM, exit code 0 required) ...');
try {
  stopped = await stopAll(Object.values(servers));
} catch (error) {
  // A measuring error comes first; a server that then also failed to stop is reported beside it.
  if (!failed) throw error;
  console.error('ERROR while stopping the servers:', error);
}
if (failed) throw failed;

// What each serve child logged over the whole run (warm-ups and rounds): logging was on.
let logErrors = 0;
for (const [id, result] of Object.entries(results)) {
  const log = stopped[id]?.log;
  if (!log) continue;
  result.log = { ...log, bytesPerRequest: log.bytes / result.requestsServed };
  result.shutdownMs = stopped[id].shutdownMs;
  logErrors += log.errors;
  if (log.errors > 0) console.error(`ERROR: ${id}: the server logged ${log.errors} errors, e.g.\n${log.errorSamples.join('\n')}`);
}

const goals = GOALS.map((goal) => ({ target: goal.target, short: goal.short, goal: goal.goal, ...goal.evaluate(results[goal.target]) }));
console.log('');
for (const goal of goals) console.log(`${goal.pass ? 'PASS' : 'FAIL'}  ${goal.target}: ${goal.goal} (measured ${goal.measured})`);

const settings = {
  date: new Date().toISOString(),
  code: codeVersion(),
  durationSeconds: DURATION,
  warmupSeconds: WARMUP,
  rounds: ROUNDS,
  connections: CONNECTIONS,
  workflows: WORKFLOWS,
  uncachedPaths: UNCACHED_PATHS.length,
};
if (PROFILE_DIR) {
  // A profiled server is slower: keep those numbers out of the recorded results.
  const profiles = Object.values(stopped).flatMap((s) => s.profiles ?? []);
  console.log(
    `\nCPU profiles and their summaries (.txt) in ${path.relative(process.cwd(), PROFILE_DIR)}: ${profiles.map((file) => path.basename(file)).join(', ')}; results not written`,
  );
} else {
  const written = writeReport(path.join(here, 'results'), { machine, settings, results, goals });
  console.log(`\nWrote ${written.map((file) => path.relative(process.cwd(), file)).join(' and ')}`);
}
if (logErrors > 0) process.exitCode = 1;
