// Writes the engine benchmark's results: engine.md for people, engine.json with the raw numbers.
import fs from 'node:fs';
import path from 'node:path';
import { describeCode } from './code-version.mjs';
import { PROCESSES } from './engine-servers.mjs';
import { describeServeRun, processLegend, sectionHeading } from './suite-report.mjs';

const cell = (text) => String(text).replaceAll('|', '\\|');

function markdown({ machine, settings, server, rows, sections }) {
  const table = [
    '| benchmark | process | goal | measured | result |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${cell(row.benchmark)} | ${row.process} | ${cell(row.goal)} | ${cell(row.measured)} | ${row.verdict} |`),
  ];
  const details = sections.map((section) => `### ${sectionHeading(section)}\n\n${section.details.map((line) => `- ${line}`).join('\n')}`);
  return `# Engine benchmark

${table.join('\n')}

${processLegend(PROCESSES)}

PASS/FAIL against the goal, judged on the \`serve\` rows only; NOT YET: the feature measured is
still being built (the benchmark is written and runs once it lands); NOTE and INFO rows have no
goal of their own (an in-process row's figures are INFO); ERROR: the benchmark could not measure
(the command then fails).

${describeServeRun(server)}

## Details

${details.join('\n\n')}

Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}; load average before the run ${machine.loadAverage.join(' / ')}.
Run: ${settings.date}${describeCode(settings.code)}; throughput: ${settings.rounds} rounds of ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per variant, ${settings.connections} connections.
Raw numbers: [engine.json](engine.json).

## How it was measured

- \`npm run bench:engine\` compiles \`src/\` to \`dist/\` with tsc and runs \`bench/engine.mjs\`, so the engine under
  test is the code production runs.
- **The process measured is the product as shipped**: \`${server.command}\`, started by
  \`bench/lib/spawn-serve.mjs\` with the defaults a user gets (log level \`info\`, stdout and stderr
  appended to a file, the engine started, embedded SQLite (WAL, \`synchronous=NORMAL\`) in a fresh
  temporary data dir), an environment without any of the shell's Switchyard, \`DATABASE_URL\`,
  \`PG*\`, \`PORT\`/\`HOST\` or \`NODE_OPTIONS\` variables, plus ${Object.entries(server.env)
    .map(([name, value]) => `\`${name}=${value}\``)
    .join(' and ')}:
  the API and webhook rate limiters on and counting, as in production, but never refusing (their
  defaults, 600 requests and 6,000 deliveries a minute, would refuse most of a load test). It is
  stopped with SIGTERM and must exit 0.
- It sees inside the server without a route or a line of code added to the product: the preload
  \`bench/lib/serve-probe.mjs\` (\`node --import\`) answers the parent over the child's IPC channel
  with the server's clock, a count of every SQLite commit (it wraps better-sqlite3's statement
  methods before the database opens: a COMMIT that ends a transaction, or a write outside one,
  counts one; one wrapper call per statement, paid by every figure) and the TCP connections
  accepted. The engine's own group-commit counter (\`engine.batcher.commits\`) cannot be read from
  outside the product, so the commit rows count SQLite commits: what a commit really costs, and
  writes that bypass the batcher are in it too.
- The parent drives the server through the REST API with the first-start token serve prints
  (create workflow, \`PUT /graph\`, \`activate\`, \`POST /run\`) and reads the execution and step
  rows straight from the SQLite file, read-only. Nothing polls the server over HTTP while a run is
  measured: the parent waits for a run's end (or a throughput backlog's) by reading the database
  file, woken by the server's commits (a file watcher on the WAL, \`bench/lib/wal-watch.mjs\`, and a
  read every 20 ms at the latest). Runs start with \`POST /run\`, not a \`last_step\` webhook: a
  synchronous delivery launches its run before the admission commit and shares that commit with
  the steps', which would measure another start (1 commit per 3-step execution instead of 2).
  Server and parent share the machine's ${machine.cores} cores.
- Extra rows, not judged: the same benchmarks against the in-process wiring
  (\`bench/servers/engine-server.mjs\`: \`loadConfig\`, \`buildDeps\`, \`bootstrap\`, \`buildApp\` in the
  bench's own script, logger and rate limits off, engine not started; \`BENCH_IN_PROCESS=0\` leaves
  it out), which is not what users run; it reports the engine's group commits beside SQLite's. Each
  benchmark runs on serve, then at once on the in-process server.
- All timings come from the rows the engine writes: \`started_at\`/\`finished_at\` are RFC 3339 with
  microseconds from the server's monotonic clock. A no-op step is a \`set\` node with \`{"values": {}}\`;
  every chain starts with a \`webhook\` trigger, and runs start with \`POST /workflows/:id/run\`.
- Per-step overhead: webhook -> 40 no-op steps, ${settings.overheadRuns} runs one at a time (after ${settings.overheadWarmup} discarded).
  Per run: (execution \`finished_at - started_at\`) minus the sum of every step row's
  \`finished_at - started_at\`, divided by 40. The execution's \`started_at\` is taken when it is
  admitted (before its first commit) and its \`finished_at\` when the last step has run (before the
  final commit), so the overhead holds the admission commit and one commit per step.
- Flatness: webhook -> 1,000 no-op steps, ${settings.flatnessRuns} runs (after ${settings.flatnessWarmup} discarded). The overhead before step k is
  \`started_at(k) - finished_at(k-1)\` (step 0 is the trigger). The medians of steps 1-50 and of steps
  951-1,000, pooled over the runs, stand for step 1 and step 1,000, so one slow commit does not decide.
- Commits: webhook -> set -> set, ${settings.commitRuns} runs one at a time (after ${settings.commitWarmup} discarded); the SQLite commit
  count's increase divided by ${settings.commitRuns}. Under load: its increase over all throughput runs (from
  before the load until the backlog drained) divided by the executions they created.
- call_workflow: parent webhook -> call_workflow (\`wait: true\`, input \`{{ trigger.body }}\`) -> set; child
  webhook -> set; ${settings.callRuns} runs one at a time. Per run: the parent's completed call step
  (\`finished_at - started_at\`) minus the child execution's (\`finished_at - started_at\`); the child is
  the execution whose \`triggered_by_step_id\` is that step (else the one with \`parent_execution_id\`).
- Throughput: webhook -> set -> set, active; autocannon (in the parent) sends \`POST /run\` on
  ${settings.connections} connections for ${settings.warmupSeconds} + ${settings.durationSeconds} + 1 s. The server's clock is read at ${settings.warmupSeconds} s and at ${settings.warmupSeconds + settings.durationSeconds} s, and the
  executions whose \`finished_at\` falls between the two, with status completed, are counted: completed
  executions per second, not HTTP answers (a \`202\` only means the execution was recorded). After
  the load, the parent waits until no execution of the run is pending or running, then checks that
  every execution completed with its 3 step rows. Variants alternate order over ${settings.rounds} rounds and
  the median round is reported; "payload saving off" is the same graph with
  \`"settings": {"save_step_payloads": false}\`. The ratio is on / off per round (the two ran back to
  back), and the median of those ratios is reported. In every round of serve's throughput, bare
  node:http (\`bench/servers/bare-node-http.mjs\`) and bare Fastify 5 answer their hello world
  (\`GET /\`) for ${settings.durationSeconds} s at the same ${settings.connections} connections, before the variants in one round and after them
  in the next: informational rows, the ceiling of this machine and load generator.
- Any error, timeout or non-2xx answer, a failed execution, or a missing step row stops that
  benchmark with ERROR and fails the command; so does an error line in serve's log, a background
  error of the in-process engine, or a serve that does not exit 0 on SIGTERM.
- This is a small shared VM: figures move by tens of percent from one minute to the next. Run twice
  before believing a change of less than about 20%.
`;
}

/** Writes engine.md and engine.json into `dir`; returns their paths. */
export function writeEngineReport(dir, report) {
  fs.mkdirSync(dir, { recursive: true });
  const md = path.join(dir, 'engine.md');
  const json = path.join(dir, 'engine.json');
  fs.writeFileSync(md, markdown(report));
  fs.writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  return [md, json];
}
