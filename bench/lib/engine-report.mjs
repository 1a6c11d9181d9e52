// Writes the engine benchmark's results: engine.md for people, engine.json with the raw numbers.
import fs from 'node:fs';
import path from 'node:path';

const cell = (text) => String(text).replaceAll('|', '\\|');

function markdown({ machine, settings, rows, sections }) {
  const table = ['| benchmark | goal | measured | result |', '| --- | --- | --- | --- |', ...rows.map((row) => `| ${cell(row.benchmark)} | ${cell(row.goal)} | ${cell(row.measured)} | ${row.verdict} |`)];
  const details = sections.map((section) => `### ${section.title}\n\n${section.details.map((line) => `- ${line}`).join('\n')}`);
  return `# Engine benchmark

${table.join('\n')}

PASS/FAIL against the goal; NOT YET: the feature measured is still being built (the benchmark is
written and runs once it lands); NOTE and INFO rows have no goal of their own; ERROR: the
benchmark could not measure (the command then fails).

## Details

${details.join('\n\n')}

Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}; load average before the run ${machine.loadAverage.join(' / ')}.
Run: ${settings.date}; throughput: ${settings.rounds} rounds of ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per variant, ${settings.connections} connections.
Raw numbers: [engine.json](engine.json).

## How it was measured

- \`npm run bench:engine\` compiles \`src/\` to \`dist/\` with tsc and runs \`bench/engine.mjs\`, so the engine under
  test is the code production runs.
- One Switchyard server runs in a child process (\`bench/servers/engine-server.mjs\`), wired as
  \`switchyard serve\` wires it (\`loadConfig\` over an empty environment, \`buildDeps\`, first-start
  \`bootstrap\`, \`buildApp\`), logger and API rate limit off, on embedded SQLite (WAL,
  \`synchronous=NORMAL\`) in a temporary data dir removed afterwards. The parent drives it through the
  REST API with the bootstrap token (create workflow, \`PUT /graph\`, \`activate\`, \`POST /run\`) and
  reads the execution and step rows straight from the SQLite file, read-only. Server and parent share
  the machine's ${machine.cores} cores.
- The child adds routes outside \`/api/v1\`, for the benchmark only: \`GET /bench/state\` (the
  engine's group-commit counter \`engine.batcher.commits\`, a count of every SQLite commit in the
  process, and the server's clock), \`GET /bench/idle\` (answers once \`engine.idle()\` resolves, so a
  sequential run is awaited without polling the server while it runs).
- The SQLite commit count wraps better-sqlite3's statement methods in the child: a COMMIT that ends a
  transaction, or a write statement run outside a transaction, counts one. It shows commits that do
  not go through the group-commit batcher.
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
- Commits: webhook -> set -> set, ${settings.commitRuns} runs one at a time (after ${settings.commitWarmup} discarded); the group-commit
  counter's increase divided by ${settings.commitRuns}. Under load: the counter's increase over all throughput
  runs (from before the load until the backlog drained) divided by the executions they created.
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
  back), and the median of those ratios is reported.
- Any error, timeout or non-2xx answer, a failed execution, or a missing step row stops that
  benchmark with ERROR and fails the command.
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
