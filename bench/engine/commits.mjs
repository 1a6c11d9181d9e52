// Benchmark 3: database commits per completed 3-step execution (webhook -> set -> set), run one
// at a time: every SQLite commit the server process made over N executions (each COMMIT and
// each autocommit write, counted by the probe's wrapper of better-sqlite3), divided by N. The
// engine's own group-commit counter (`engine.batcher.commits`) cannot be read from outside
// `switchyard serve`; SQLite's count is what a commit really costs, and it also sees writes that
// bypass the batcher. The in-process server reports both. Under load: see throughput.mjs.
import { chainGraph } from '../lib/engine-graphs.mjs';
import { assertCompleted } from './session.mjs';

export async function measureCommits(session, { executions, warmup, log }) {
  const workflowId = await session.activeWorkflow('bench: 3-step commits', chainGraph(2));
  for (let i = 0; i < warmup; i += 1) assertCompleted(await session.runToEnd(workflowId), 'commits warm-up');

  const before = await session.state();
  for (let i = 0; i < executions; i += 1) assertCompleted(await session.runToEnd(workflowId, { run: i }), 'commits');
  const after = await session.state();

  const sqliteCommits = after.sqliteCommits - before.sqliteCommits;
  const perExecution = sqliteCommits / executions;
  const groupCommits = after.groupCommits === undefined ? null : after.groupCommits - before.groupCommits;
  const group = groupCommits === null ? '' : ` (engine group commits: ${(groupCommits / executions).toFixed(2)})`;
  log(`SQLite commits per 3-step execution, sequential: ${perExecution.toFixed(2)}${group}`);
  return {
    perExecution,
    rows: [
      {
        benchmark: `SQLite commits per completed 3-step execution, ${executions} sequential runs`,
        goal: 'at most 3',
        measured: `${perExecution.toFixed(2)}${group}`,
        verdict: perExecution <= 3 ? 'PASS' : 'FAIL',
      },
    ],
    details: [
      `SQLite commits in the server process over the ${executions} runs (every COMMIT and every write outside a transaction): ${sqliteCommits}${groupCommits === null ? '' : `; the engine's group commits over the same runs: ${groupCommits}`}.`,
    ],
    raw: { executions, warmup, sqliteCommits, groupCommits, perExecution },
  };
}
