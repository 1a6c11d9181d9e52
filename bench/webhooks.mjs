// `npm run bench:webhooks`: the inbound-webhook benchmarks. Builds nothing itself (the npm script
// runs `npm run build` first); starts a Switchyard server and a bare Fastify server in child
// processes and measures, in turn: immediate-mode throughput (with the bare Fastify ratio),
// respond_step answer latency at 1 and 8 connections, and 200 concurrent connections.
// Writes bench/results/webhooks.{md,json}. See bench/README.md.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServer } from './lib/spawn-server.mjs';
import { machineFacts } from './lib/machine.mjs';
import { writeWebhooksReport } from './lib/webhooks-report.mjs';
import { DELIVERY_BODY, RESPOND_STEP_ANSWER, immediateGraph, respondStepGraph } from './lib/webhook-graphs.mjs';
import { engineSession } from './engine/session.mjs';
import { webhookTarget } from './webhooks/targets.mjs';
import { measureImmediateThroughput, RAMP_SECONDS } from './webhooks/immediate-throughput.mjs';
import { measureSyncLatency } from './webhooks/sync-latency.mjs';
import { createSections } from './lib/sections.mjs';
import { measureManyConnections } from './webhooks/many-connections.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** BENCH_CPU_PROF=1: the Switchyard server runs under `node --cpu-prof`; results are then not written. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF === '1' ? path.join(here, 'results', 'profiles') : undefined;
/** Where the server's threads write their profiles (the code step's workers write one each). */
const THREAD_PROFILES = PROFILE_DIR && path.join(PROFILE_DIR, 'webhooks-threads');

/**
 * Names the profiles Node wrote per thread (`CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile`):
 * thread 0 is the main thread, `webhooks.cpuprofile`; the workers, `webhooks-worker-<id>.cpuprofile`.
 */
function nameThreadProfiles() {
  const named = [];
  for (const file of fs.readdirSync(THREAD_PROFILES)) {
    const thread = /^CPU\.\d+\.\d+\.\d+\.(\d+)\.\d+\.cpuprofile$/.exec(file)?.[1];
    if (thread === undefined) continue;
    const name = thread === '0' ? 'webhooks.cpuprofile' : `webhooks-worker-${thread}.cpuprofile`;
    fs.renameSync(path.join(THREAD_PROFILES, file), path.join(PROFILE_DIR, name));
    named.push(name);
  }
  fs.rmSync(THREAD_PROFILES, { recursive: true, force: true });
  return named;
}

function whole(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number (at least ${min}), got "${raw}"`);
  return value;
}

/**
 * Which code was measured: the commit, and whether src/ differed from it (read-only git calls;
 * null outside a git checkout). src/ moves between runs, so the report names it.
 */
function codeVersion() {
  try {
    const git = (...args) => execFileSync('git', args, { cwd: here, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    let changed = git('ls-files', '--others', '--exclude-standard', '--', '../src') !== '';
    try {
      git('diff', '--quiet', 'HEAD', '--', '../src');
    } catch {
      changed = true;
    }
    return { commit, srcChanged: changed };
  } catch {
    return null;
  }
}

const settings = {
  date: new Date().toISOString(),
  code: codeVersion(),
  durationSeconds: whole('BENCH_DURATION', 3),
  warmupSeconds: whole('BENCH_WARMUP', 2),
  rounds: whole('BENCH_ROUNDS', 3),
  connections: whole('BENCH_CONNECTIONS', 32),
  rampSeconds: RAMP_SECONDS,
  deliveryBody: DELIVERY_BODY,
  respondStepAnswer: RESPOND_STEP_ANSWER,
};
const bench = createSections();
const machine = machineFacts();
const log = (line) => console.log(line);

const { section, sections } = bench;

const { rounds, warmupSeconds: warmup, durationSeconds: duration, connections } = settings;
const servers = [];
let session;
let server;
try {
  if (THREAD_PROFILES) fs.rmSync(THREAD_PROFILES, { recursive: true, force: true });
  server = await spawnServer(path.join(here, 'servers', 'engine-server.mjs'), [], { name: 'webhooks', profileDir: THREAD_PROFILES, perThread: true });
  servers.push(server);
  const bareServer = await spawnServer(path.join(here, 'servers', 'bare-fastify.mjs'), [], { name: 'bare' });
  servers.push(bareServer);
  session = engineSession(server);
  const bare = { url: `http://127.0.0.1:${bareServer.port}/` };

  const immediate = await webhookTarget(session, 'bench: immediate webhook -> code', immediateGraph(), {
    status: 202,
    check: (text) => /^\{"ok":true,"execution_id":"[0-9a-f-]{36}"\}$/.test(text),
  });
  const respondStep = await webhookTarget(session, 'bench: respond_step webhook -> code -> respond', respondStepGraph(), { status: 200, body: RESPOND_STEP_ANSWER });

  await section(1, 'Immediate-mode throughput', () => measureImmediateThroughput(session, immediate, bare, { rounds, warmup, duration, connections, log }));
  await section(2, 'respond_step answer latency', () => measureSyncLatency(session, respondStep, { rounds, warmup, duration, log }));
  await section(3, '200 concurrent connections, respond_step', () => measureManyConnections(session, respondStep, { rounds, warmup, duration, log }));
  const { backgroundErrors } = await session.state();
  if (backgroundErrors > 0) {
    bench.failed = true;
    console.error(`ERROR: the engine reported ${backgroundErrors} background errors (see above)`);
  }
} finally {
  session?.close();
  for (const child of servers.reverse()) await child.stop();
}

const rows = sections.flatMap((s) => s.rows);
console.log('');
for (const row of rows) console.log(`${row.verdict.padEnd(7)} ${row.benchmark ? `${row.benchmark}: ` : ''}${row.goal ? `${row.goal} ` : ''}(measured ${row.measured})`);

if (PROFILE_DIR || bench.only) {
  // A profiled server is slower, and a partial run is not the whole report: keep both out of the
  // results, but show the details the report would have held.
  for (const s of sections) console.log(`\n${s.number}. ${s.title}\n${s.details.map((line) => `- ${line}`).join('\n')}`);
  if (PROFILE_DIR) console.log(`\nCPU profiles in ${path.relative(process.cwd(), PROFILE_DIR)}: ${nameThreadProfiles().sort().join(', ')} (summarise: node bench/profile-summary.mjs <file>)`);
  console.log('Results not written (BENCH_CPU_PROF or BENCH_ONLY set).');
} else {
  const report = { machine, settings, server: { http: server.http }, rows, sections: sections.map(({ number, title, details, raw }) => ({ number, title, details, raw })) };
  const written = writeWebhooksReport(path.join(here, 'results'), report);
  console.log(`\nWrote ${written.map((file) => path.relative(process.cwd(), file)).join(' and ')}`);
}
if (bench.failed) process.exitCode = 1;
