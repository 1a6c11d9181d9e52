// What every engine and webhook benchmark works with: the API client, the server's database
// read straight from its file (read-only), the server's probe (SQLite commits, clock, accepted
// connections, event-loop windows; lib/probe.mjs over IPC), and "run this workflow and wait
// until it has finished". Nothing polls the server over HTTP while it runs: the parent reads the
// database file, woken by the server's commits (lib/wal-watch.mjs).
//
// Runs start with `POST /workflows/:id/run`, as before, rather than a `last_step` webhook: a
// synchronous delivery launches its run before the admission commit and lets the two share a
// group commit (src/engine/engine.ts, `early`), so it would measure 1 commit per 3-step
// execution where `/run` makes 2, and a different start for the per-step figures.
import { apiClient } from '../lib/api-client.mjs';
import { openEngineDb, TERMINAL } from '../lib/engine-db.mjs';
import { watchWal } from '../lib/wal-watch.mjs';

const WAIT_TIMEOUT_MS = 60_000;
/** The longest a wait trusts the WAL watcher before reading again anyway. */
const RECHECK_MS = 20;

/** `server`: a spawn-serve.mjs or spawn-server.mjs child with a probe, a token and a database file. */
export function engineSession(server) {
  if (!server.probe) throw new Error(`${server.id}: the engine benchmarks need the server's probe`);
  const api = apiClient(server.baseUrl, server.token);
  const db = openEngineDb(server.databaseFile);
  const wal = watchWal(server.databaseFile);
  /** `{sqliteCommits, commitMs, now, connections}`; the in-process servers add `groupCommits` and `backgroundErrors`. */
  const state = () => server.probe('state');
  const eventLoop = { start: () => server.probe('loop-start'), stop: () => server.probe('loop-stop') };

  /** Reads `read()` after every commit of the server until `done(value)`; resolves with that value. */
  async function untilCommitted(read, done, timeoutMs, what) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const changed = wal.changed(RECHECK_MS);
      const value = read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`${what} (after ${timeoutMs / 1000} s: ${JSON.stringify(value)})`);
      await changed;
    }
  }

  /** The execution's row once it is terminal. */
  const waitForExecution = (id) =>
    untilCommitted(
      () => db.execution(id),
      (row) => row && TERMINAL.has(row.status),
      WAIT_TIMEOUT_MS,
      `execution ${id} did not finish`,
    );

  /** Waits until no execution of the workflow inserted since `since` is pending, running or waiting. */
  const waitForBacklog = (workflowId, since) =>
    untilCommitted(
      () => db.statuses(workflowId, since),
      (counts) => !counts.pending && !counts.running && !counts.waiting,
      5 * WAIT_TIMEOUT_MS,
      'the backlog did not drain',
    );

  return {
    api,
    db,
    state,
    eventLoop,
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
    close: () => {
      wal.close();
      db.close();
    },
  };
}

/** Throws unless the execution completed (a failed run would make its timings meaningless). */
export function assertCompleted(row, what) {
  if (row.status !== 'completed') throw new Error(`${what}: execution ${row.id} ended ${row.status}: ${row.error ?? ''}`);
  return row;
}
