// `npm run bench:engine`: the execution-engine benchmarks of issue 3. Builds nothing itself (the
// npm script runs `npm run build` first); starts `switchyard serve` at its defaults (the judged
// rows), the in-process wiring (extra rows) and the bare baselines, each in a child process, and
// measures, in turn: per-step overhead, flatness over 1,000 steps, commits per execution,
// call_workflow overhead and throughput. Writes bench/results/engine.{md,json}. See bench/README.md.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineFacts } from './lib/machine.mjs';
import { codeVersion } from './lib/code-version.mjs';
import { wholeNumber } from './lib/env-number.mjs';
import { monotonicMicros } from './lib/hrtime.mjs';
import { writeEngineReport } from './lib/engine-report.mjs';
import { startEngineServers, stopEngineServers, targetsOf } from './lib/engine-servers.mjs';
import { engineSession } from './engine/session.mjs';
import { measureStepOverhead } from './engine/step-overhead.mjs';
import { measureFlatness } from './engine/flatness.mjs';
import { measureCommits } from './engine/commits.mjs';
import { measureCallWorkflow } from './engine/call-workflow.mjs';
import { createSections } from './lib/sections.mjs';
import { measureThroughput } from './engine/throughput.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** BENCH_CPU_PROF=1: the Switchyard servers run under `node --cpu-prof`; results are then not written. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF === '1' ? path.join(here, 'results', 'profiles') : undefined;

const settings = {
  date: new Date().toISOString(),
  code: codeVersion(),
  durationSeconds: wholeNumber('BENCH_DURATION', 5),
  warmupSeconds: wholeNumber('BENCH_WARMUP', 2),
  rounds: wholeNumber('BENCH_ROUNDS', 3),
  connections: wholeNumber('BENCH_CONNECTIONS', 32),
  overheadRuns: 200,
  overheadWarmup: 20,
  flatnessRuns: 5,
  flatnessWarmup: 1,
  commitRuns: 100,
  commitWarmup: 10,
  callRuns: 200,
  callWarmup: 20,
};
const bench = createSections();
const machine = machineFacts();
const log = (line) => console.log(line);

const BENCHMARKS = [
  [
    1,
    'Per-step orchestration overhead',
    ({ session }) => measureStepOverhead(session, { runs: settings.overheadRuns, warmup: settings.overheadWarmup, log }),
  ],
  [
    2,
    'Flatness over 1,000 steps',
    ({ session }) => measureFlatness(session, { runs: settings.flatnessRuns, warmup: settings.flatnessWarmup, log }),
  ],
  [
    3,
    'Database commits per execution',
    ({ session }) => measureCommits(session, { executions: settings.commitRuns, warmup: settings.commitWarmup, log }),
  ],
  [
    4,
    'call_workflow overhead',
    ({ session }) => measureCallWorkflow(session, { runs: settings.callRuns, warmup: settings.callWarmup, log }),
  ],
  [
    5,
    'Throughput',
    ({ session, baselines }) =>
      measureThroughput(session, {
        rounds: settings.rounds,
        warmup: settings.warmupSeconds,
        duration: settings.durationSeconds,
        connections: settings.connections,
        baselines,
        log,
      }),
  ],
];

const servers = await startEngineServers('engine', { profileDir: PROFILE_DIR });
let targets = [];
let stopped;
try {
  targets = targetsOf(servers, engineSession);
  // Benchmark by benchmark, serve first and the in-process extra right after, so the two meet
  // the machine in about the same state.
  for (const [number, title, measureIt] of BENCHMARKS) {
    for (const target of targets) {
      const from = monotonicMicros();
      if (await bench.section(number, title, () => measureIt(target), target)) target.server.loadSpans.push([from, monotonicMicros()]);
    }
  }
} finally {
  stopped = await stopEngineServers(servers, targets);
}
if (stopped.errors > 0) bench.failed = true;

// The table: each benchmark's rows in order, the commits-under-load row beside the sequential one.
const throughputOf = (process) => bench.sections.find((s) => s.number === 5 && s.process === process);
const rows = bench.sections.flatMap((s) =>
  s.number === 3 && throughputOf(s.process)?.commitsRow ? [...s.rows, throughputOf(s.process).commitsRow] : s.rows,
);
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
    server: stopped.serve,
    rows,
    sections: bench.sections.map(({ number, title, process, details, raw }) => ({ number, title, process, details, raw })),
  };
  const written = writeEngineReport(path.join(here, 'results'), report);
  console.log(`\nWrote ${written.map((file) => path.relative(process.cwd(), file)).join(' and ')}`);
}
if (bench.failed) process.exitCode = 1;
