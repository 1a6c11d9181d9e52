// `npm run bench:webhooks`: the inbound-webhook benchmarks. Builds nothing itself (the npm script
// runs `npm run build` first); starts `switchyard serve` at its defaults (the judged rows), the
// in-process wiring (extra rows) and the bare node:http and Fastify baselines, each in a child
// process, and measures, in turn: immediate-mode throughput (with the baselines' ratios),
// respond_step answer latency at 1 and 8 connections, and 200 concurrent connections.
// Writes bench/results/webhooks.{md,json}. See bench/README.md.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineFacts } from './lib/machine.mjs';
import { codeVersion } from './lib/code-version.mjs';
import { wholeNumber } from './lib/env-number.mjs';
import { monotonicMicros } from './lib/hrtime.mjs';
import { writeWebhooksReport } from './lib/webhooks-report.mjs';
import { startEngineServers, stopEngineServers, targetsOf } from './lib/engine-servers.mjs';
import { DELIVERY_BODY, RESPOND_STEP_ANSWER, immediateGraph, respondStepGraph } from './lib/webhook-graphs.mjs';
import { engineSession } from './engine/session.mjs';
import { webhookTarget } from './webhooks/targets.mjs';
import { measureImmediateThroughput, RAMP_SECONDS } from './webhooks/immediate-throughput.mjs';
import { measureSyncLatency } from './webhooks/sync-latency.mjs';
import { createSections } from './lib/sections.mjs';
import { measureManyConnections } from './webhooks/many-connections.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** BENCH_CPU_PROF=1: the Switchyard servers run under `node --cpu-prof` (one profile per thread); results are then not written. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF === '1' ? path.join(here, 'results', 'profiles') : undefined;

const settings = {
  date: new Date().toISOString(),
  code: codeVersion(),
  durationSeconds: wholeNumber('BENCH_DURATION', 3),
  warmupSeconds: wholeNumber('BENCH_WARMUP', 2),
  rounds: wholeNumber('BENCH_ROUNDS', 3),
  connections: wholeNumber('BENCH_CONNECTIONS', 32),
  rampSeconds: RAMP_SECONDS,
  deliveryBody: DELIVERY_BODY,
  respondStepAnswer: RESPOND_STEP_ANSWER,
};
const bench = createSections();
const machine = machineFacts();
const log = (line) => console.log(line);

const { rounds, warmupSeconds: warmup, durationSeconds: duration, connections } = settings;
const BENCHMARKS = [
  [
    1,
    'Immediate-mode throughput',
    ({ session, endpoints, baselines }) =>
      measureImmediateThroughput(session, endpoints.immediate, baselines, { rounds, warmup, duration, connections, log }),
  ],
  [
    2,
    'respond_step answer latency',
    ({ session, endpoints }) => measureSyncLatency(session, endpoints.respondStep, { rounds, warmup, duration, log }),
  ],
  [
    3,
    '200 concurrent connections, respond_step',
    ({ session, endpoints }) => measureManyConnections(session, endpoints.respondStep, { rounds, warmup, duration, log }),
  ],
];

/** The two endpoints every target's benchmarks load, set up (and checked) through its API. */
async function endpointsOf(session) {
  return {
    immediate: await webhookTarget(session, 'bench: immediate webhook -> code', immediateGraph(), {
      status: 202,
      check: (text) => /^\{"ok":true,"execution_id":"[0-9a-f-]{36}"\}$/.test(text),
    }),
    respondStep: await webhookTarget(session, 'bench: respond_step webhook -> code -> respond', respondStepGraph(), {
      status: 200,
      body: RESPOND_STEP_ANSWER,
    }),
  };
}

const servers = await startEngineServers('webhooks', { profileDir: PROFILE_DIR });
let targets = [];
let stopped;
let http = null;
try {
  targets = targetsOf(servers, engineSession);
  for (const target of targets) target.endpoints = await endpointsOf(target.session);
  // Benchmark by benchmark, serve first and the in-process extra right after, so the two meet
  // the machine in about the same state.
  for (const [number, title, measureIt] of BENCHMARKS) {
    for (const target of targets) {
      const from = monotonicMicros();
      if (await bench.section(number, title, () => measureIt(target), target)) target.server.loadSpans.push([from, monotonicMicros()]);
    }
  }
  http = await servers.serve.probe('http');
} finally {
  stopped = await stopEngineServers(servers, targets);
}
if (stopped.errors > 0) bench.failed = true;

const rows = bench.sections.flatMap((s) => s.rows);
console.log('');
for (const row of rows)
  console.log(
    `${row.verdict.padEnd(7)} [${row.process}] ${row.benchmark ? `${row.benchmark}: ` : ''}${row.goal ? `${row.goal} ` : ''}(measured ${row.measured})`,
  );
console.log(
  `\nswitchyard serve logged ${stopped.serve.log.lines.toLocaleString('en-US')} lines (${(stopped.serve.log.bytes / 1e6).toFixed(1)} MB) and exited 0 on SIGTERM after ${stopped.serve.shutdownMs} ms`,
);

if (PROFILE_DIR || bench.only) {
  // A profiled server is slower, and a partial run is not the whole report: keep both out of the
  // results, but show the details the report would have held.
  for (const s of bench.sections)
    console.log(`\n${s.number}. ${s.title} [${s.process}]\n${s.details.map((line) => `- ${line}`).join('\n')}`);
  if (PROFILE_DIR)
    console.log(
      `\nCPU profiles and their summaries (.txt) in ${path.relative(process.cwd(), PROFILE_DIR)}: ${stopped.profiles.map((file) => path.basename(file)).join(', ')}`,
    );
  console.log('Results not written (BENCH_CPU_PROF or BENCH_ONLY set).');
} else {
  const report = {
    machine,
    settings,
    server: { ...stopped.serve, http },
    rows,
    sections: bench.sections.map(({ number, title, process, details, raw }) => ({ number, title, process, details, raw })),
  };
  const written = writeWebhooksReport(path.join(here, 'results'), report);
  console.log(`\nWrote ${written.map((file) => path.relative(process.cwd(), file)).join(' and ')}`);
}
if (bench.failed) process.exitCode = 1;
