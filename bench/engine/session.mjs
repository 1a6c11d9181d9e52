// What every engine benchmark works with: the API client, the read-only database, the bench
// child's state and idle routes, and "run this workflow and wait until it has finished".
import { setTimeout as sleep } from 'node:timers/promises';
import { apiClient } from '../lib/api-client.mjs';
import { openEngineDb, TERMINAL } from '../lib/engine-db.mjs';

const WAIT_TIMEOUT_MS = 60_000;

export function engineSession(server) {
  const api = apiClient(`http://127.0.0.1:${server.port}`, server.token);
  const db = openEngineDb(server.databaseFile);
  /** `{commits, sqliteCommits, now, backgroundErrors}` from the server process. */
  const state = () => api.bench('GET', '/bench/state');

  /**
   * Waits for one execution to end: the server answers /bench/idle once its engine has nothing
   * in flight (no polling load while it runs); the row is then read, and polled briefly only if
   * it is not terminal yet (a parent waiting on a child between two runs of the engine).
   */
  async function waitForExecution(id) {
    await api.bench('GET', '/bench/idle');
    const deadline = Date.now() + WAIT_TIMEOUT_MS;
    for (;;) {
      const row = db.execution(id);
      if (row && TERMINAL.has(row.status)) return row;
      if (Date.now() > deadline) throw new Error(`execution ${id} did not finish within ${WAIT_TIMEOUT_MS / 1000} s (status ${row?.status})`);
      await sleep(2);
    }
  }

  /** Waits until no execution of the workflow inserted since `since` is pending, running or waiting. */
  async function waitForBacklog(workflowId, since) {
    const deadline = Date.now() + 5 * WAIT_TIMEOUT_MS;
    for (;;) {
      await api.bench('GET', '/bench/idle');
      const counts = db.statuses(workflowId, since);
      if (!counts.pending && !counts.running && !counts.waiting) return counts;
      if (Date.now() > deadline) throw new Error(`the backlog did not drain: ${JSON.stringify(counts)}`);
      await sleep(20);
    }
  }

  return {
    api,
    db,
    state,
    waitForExecution,
    waitForBacklog,
    /** Creates a workflow, pushes its graph and activates it; returns its id. */
    async activeWorkflow(name, graph) {
      const id = await api.createWorkflow(name);
      await api.putGraph(id, graph);
      await api.activate(id);
      return id;
    },
    /** POST /run, then waits for the end; returns the execution row. */
    async runToEnd(workflowId, input = {}) {
      const { execution_id: id } = await api.run(workflowId, input);
      return waitForExecution(id);
    },
    close: () => db.close(),
  };
}

/** Throws unless the execution completed (a failed run would make its timings meaningless). */
export function assertCompleted(row, what) {
  if (row.status !== 'completed') throw new Error(`${what}: execution ${row.id} ended ${row.status}: ${row.error ?? ''}`);
  return row;
}
