// Reads the bench server's SQLite file from the parent process, read-only: execution and step
// rows, with their RFC 3339 microsecond timestamps turned into microseconds since the epoch.
import SQLite from 'better-sqlite3';
import { parseTimestampMicros } from '../../dist/lib/clock.js';

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Microseconds since the epoch of a stored timestamp; throws on null (a row not finished). */
export function micros(timestamp) {
  const value = timestamp === null ? null : parseTimestampMicros(timestamp);
  if (value === null) throw new Error(`not a timestamp: ${timestamp}`);
  return value;
}

export function openEngineDb(file) {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  const executionColumns =
    'id, workflow_id, status, started_at, finished_at, inserted_at, error, triggered_by_step_id, parent_execution_id';
  const q = {
    execution: db.prepare(`SELECT ${executionColumns} FROM executions WHERE id = ?`),
    children: db.prepare(`SELECT ${executionColumns} FROM executions WHERE parent_execution_id = ?`),
    steps: db.prepare(
      `SELECT id, node_id, status, attempt, started_at, finished_at, duration_ms, error FROM execution_steps WHERE workflow_execution_id = ? ORDER BY inserted_at, id`,
    ),
    statuses: db.prepare('SELECT status, count(*) AS n FROM executions WHERE workflow_id = ? AND inserted_at >= ? GROUP BY status'),
    completedBetween: db
      .prepare("SELECT count(*) FROM executions WHERE workflow_id = ? AND status = 'completed' AND finished_at >= ? AND finished_at < ?")
      .pluck(),
    span: db.prepare(
      "SELECT min(inserted_at) AS first_inserted, max(finished_at) AS last_finished, count(*) AS n FROM executions WHERE workflow_id = ? AND inserted_at >= ? AND status = 'completed'",
    ),
    timeline:
      db.prepare(`SELECT e.id, e.inserted_at, e.started_at, e.finished_at, s.node_id, s.started_at AS step_started_at, s.finished_at AS step_finished_at
      FROM executions e JOIN execution_steps s ON s.workflow_execution_id = e.id
      WHERE e.workflow_id = ? AND e.status = 'completed' AND e.finished_at >= ? AND e.finished_at < ?`),
    stepPayloads:
      db.prepare(`SELECT count(*) AS steps, sum(s.status = 'completed') AS completed, sum(s.input IS NOT NULL) AS with_input, sum(s.output IS NOT NULL) AS with_output
      FROM execution_steps s JOIN executions e ON e.id = s.workflow_execution_id WHERE e.workflow_id = ? AND e.inserted_at >= ?`),
  };
  return {
    execution: (id) => q.execution.get(id),
    children: (parentId) => q.children.all(parentId),
    steps: (executionId) => q.steps.all(executionId),
    /** Executions of a workflow inserted since `since`, counted by status: `{completed: n, ...}`. */
    statuses: (workflowId, since) => Object.fromEntries(q.statuses.all(workflowId, since).map((row) => [row.status, row.n])),
    completedBetween: (workflowId, from, to) => q.completedBetween.get(workflowId, from, to),
    span: (workflowId, since) => q.span.get(workflowId, since),
    stepPayloads: (workflowId, since) => q.stepPayloads.get(workflowId, since),
    /**
     * Completed executions that finished in [from, to), each `{inserted_at, started_at, finished_at,
     * steps: {<node id>: {started_at, finished_at}}}`, in microseconds.
     */
    timeline: (workflowId, from, to) => {
      const byId = new Map();
      for (const row of q.timeline.all(workflowId, from, to)) {
        let execution = byId.get(row.id);
        if (!execution) {
          execution = {
            id: row.id,
            inserted_at: micros(row.inserted_at),
            started_at: micros(row.started_at),
            finished_at: micros(row.finished_at),
            steps: {},
          };
          byId.set(row.id, execution);
        }
        execution.steps[row.node_id] = { started_at: micros(row.step_started_at), finished_at: micros(row.step_finished_at) };
      }
      return [...byId.values()];
    },
    close: () => db.close(),
  };
}

/** A failed step's stored error `{code, message, ...}`, or null. */
export function stepError(row) {
  if (!row.error) return null;
  try {
    return JSON.parse(row.error);
  } catch {
    return { code: 'unparsed', message: row.error };
  }
}
