// Benchmark 3: database commits per completed 3-step execution (webhook -> set -> set), run one
// at a time: the engine's group-commit counter over N executions, divided by N. The SQLite
// commit count (every COMMIT and every autocommit write in the server process) is reported
// beside it, so a write that bypasses the batcher shows. Under load: see throughput.mjs.
import { chainGraph } from '../lib/engine-graphs.mjs';
import { assertCompleted } from './session.mjs';

export async function measureCommits(session, { executions, warmup, log }) {
  const workflowId = await session.activeWorkflow('bench: 3-step commits', chainGraph(2));
  for (let i = 0; i < warmup; i += 1) assertCompleted(await session.runToEnd(workflowId), 'commits warm-up');

  const before = await session.state();
  for (let i = 0; i < executions; i += 1) assertCompleted(await session.runToEnd(workflowId, { run: i }), 'commits');
  const after = await session.state();

  const perExecution = (after.commits - before.commits) / executions;
  const sqlitePerExecution = (after.sqliteCommits - before.sqliteCommits) / executions;
  log(`commits per 3-step execution, sequential: ${perExecution.toFixed(2)} group commits (${sqlitePerExecution.toFixed(2)} SQLite commits)`);
  return {
    perExecution,
    rows: [
      {
        benchmark: `Database commits per completed 3-step execution, ${executions} sequential runs`,
        goal: 'at most 3',
        measured: `${perExecution.toFixed(2)} (SQLite: ${sqlitePerExecution.toFixed(2)})`,
        verdict: perExecution <= 3 ? 'PASS' : 'FAIL',
      },
    ],
    details: [`Group commits (\`engine.batcher.commits\`): ${after.commits - before.commits} for ${executions} executions; SQLite commits in the server process over the same runs: ${after.sqliteCommits - before.sqliteCommits}.`],
    raw: { executions, warmup, groupCommits: after.commits - before.commits, sqliteCommits: after.sqliteCommits - before.sqliteCommits, perExecution, sqlitePerExecution },
  };
}
