// `npm run bench:engine`: the execution-engine benchmarks of issue 3. Builds nothing itself (the
// npm script runs `npm run build` first); starts one Switchyard server in a child process and
// measures, in turn: per-step overhead, flatness over 1,000 steps, commits per execution,
// call_workflow overhead and throughput. Writes bench/results/engine.{md,json}. See bench/README.md.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServer } from './lib/spawn-server.mjs';
import { machineFacts } from './lib/machine.mjs';
import { writeEngineReport } from './lib/engine-report.mjs';
import { engineSession } from './engine/session.mjs';
import { measureStepOverhead } from './engine/step-overhead.mjs';
import { measureFlatness } from './engine/flatness.mjs';
import { measureCommits } from './engine/commits.mjs';
import { measureCallWorkflow } from './engine/call-workflow.mjs';
import { createSections } from './lib/sections.mjs';
import { measureThroughput } from './engine/throughput.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** BENCH_CPU_PROF=1: the server runs under `node --cpu-prof`; results are then not written. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF === '1' ? path.join(here, 'results', 'profiles') : undefined;

function whole(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number (at least ${min}), got "${raw}"`);
  return value;
}

const settings = {
  date: new Date().toISOString(),
  durationSeconds: whole('BENCH_DURATION', 5),
  warmupSeconds: whole('BENCH_WARMUP', 2),
  rounds: whole('BENCH_ROUNDS', 3),
  connections: whole('BENCH_CONNECTIONS', 32),
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

const { section, sections } = bench;

const server = await spawnServer(path.join(here, 'servers', 'engine-server.mjs'), [], { name: 'engine', profileDir: PROFILE_DIR });
const session = engineSession(server);
try {
  await section(1, 'Per-step orchestration overhead', () => measureStepOverhead(session, { runs: settings.overheadRuns, warmup: settings.overheadWarmup, log }));
  await section(2, 'Flatness over 1,000 steps', () => measureFlatness(session, { runs: settings.flatnessRuns, warmup: settings.flatnessWarmup, log }));
  await section(3, 'Database commits per execution', () => measureCommits(session, { executions: settings.commitRuns, warmup: settings.commitWarmup, log }));
  await section(4, 'call_workflow overhead', () => measureCallWorkflow(session, { runs: settings.callRuns, warmup: settings.callWarmup, log }));
  await section(5, 'Throughput', () => measureThroughput(session, { rounds: settings.rounds, warmup: settings.warmupSeconds, duration: settings.durationSeconds, connections: settings.connections, log }));
  const { backgroundErrors } = await session.state();
  if (backgroundErrors > 0) {
    bench.failed = true;
    console.error(`ERROR: the engine reported ${backgroundErrors} background errors (see above)`);
  }
} finally {
  session.close();
  await server.stop();
}

// The table: each benchmark's rows in order, the commits-under-load row beside the sequential one.
const throughput = sections.find((s) => s.number === 5);
const rows = sections.flatMap((s) => (s.number === 3 && throughput?.commitsRow ? [...s.rows, throughput.commitsRow] : s.rows));
console.log('');
for (const row of rows) console.log(`${row.verdict.padEnd(7)} ${row.benchmark ? `${row.benchmark}: ` : ''}${row.goal ? `${row.goal} ` : ''}(measured ${row.measured})`);

if (PROFILE_DIR || bench.only) {
  // A profiled server is slower, and a partial run is not the whole report: keep both out of the results.
  if (PROFILE_DIR) console.log(`\nCPU profile in ${path.relative(process.cwd(), PROFILE_DIR)}/engine.cpuprofile (summarise: node bench/profile-summary.mjs <file>)`);
  console.log('Results not written (BENCH_CPU_PROF or BENCH_ONLY set).');
} else {
  const report = { machine, settings, rows, sections: sections.map(({ number, title, details, raw }) => ({ number, title, details, raw })) };
  const written = writeEngineReport(path.join(here, 'results'), report);
  console.log(`\nWrote ${written.map((file) => path.relative(process.cwd(), file)).join(' and ')}`);
}
if (bench.failed) process.exitCode = 1;
