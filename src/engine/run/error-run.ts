import type { Transaction } from 'kysely';
import type { Database, ErrorWorkflowSkipped } from '../../db/schema.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';
import type { GraphPlan } from './graph-plan.js';

/**
 * Error workflows (docs/run-control.md "Error workflows"): a workflow may name another of its
 * workspace that starts once when any of its executions ends `failed` (top-level or a
 * call_workflow child, draft or manual run), unless that execution is itself an error
 * workflow's run (`loop`).
 *
 * Exactly once: the error workflow's execution is inserted in the very commit that writes the
 * failure (commit/run-commit.ts `alsoWrite`, after the execution's conditional update), and the
 * failed row's `error_workflow_execution_id` records it there too. That commit lands once: alone it is
 * conditional on the execution being live, in a cluster on this worker's lease as well. A crash
 * before it loses both (the failing step runs again after recovery and prepares a new one); a
 * crash after it leaves both. No second statement can start it again.
 *
 * This file holds the types and rules (imported by run-types.ts, so it must not import
 * execution-start.ts: a cycle); error-start.ts builds the new execution.
 */

/** How the execution failed, as its error workflow's input reports it. */
export interface Failure {
  /** The execution's `error` (the failed step's error, with `node_id`). */
  error: unknown;
  /** The node whose step failed last; null when none did (a stalled graph). */
  nodeId: string | null;
  startedAt: string | null;
  finishedAt: string;
}

/** What a failure's commit writes about the error workflow. */
export interface ErrorRun {
  /** The failed execution's columns: the execution started, or why none was. */
  record: Pick<ExecutionRow, 'error_workflow_execution_id' | 'error_workflow_skipped'>;
  /** Inserts the error workflow's execution in the failure's commit. */
  admit?: (trx: Transaction<Database>) => Promise<void>;
  /** Once that commit is durable and current: start it. */
  committed?: () => void;
}

/** Prepares what a failed execution's commit writes about its error workflow; null: nothing (its workflow names none). */
export type ErrorRunPreparer = (failed: ExecutionRow, failure: Failure) => Promise<ErrorRun | null>;

/**
 * The error workflow of a failed execution's workflow, as the service layer resolves it: null
 * when it names none; `skipped` with the reason when the one it names cannot start (`missing`:
 * deleted; `inactive`: no active snapshot); otherwise the snapshot to start. `workflowName`:
 * the failed execution's workflow's.
 */
export type ErrorWorkflowResolver = (request: {
  workspaceId: string;
  workflowId: string;
}) => Promise<
  | null
  | { workflowName: string; skipped: Exclude<ErrorWorkflowSkipped, 'loop'> }
  | { workflowName: string; workflowId: string; snapshotId: string }
>;

/** How the engine creates and starts the error workflow's execution (its scheduler's `admitPending`, `startPending`). */
export interface ErrorRunScheduling {
  plan(snapshotId: string): Promise<GraphPlan>;
  now(): string;
  admit(trx: Transaction<Database>, row: ExecutionRow, steps: StepRow[]): Promise<void>;
  start(row: ExecutionRow, plan: GraphPlan, steps: StepRow[]): void;
}

/**
 * Whether a failed execution may start its workflow's error workflow: every one (a call_workflow
 * child too: its workflow's error workflow hears of it, and its parent's of the parent's own
 * failure) but an error workflow's execution, which records `loop` instead (an error workflow
 * that fails starts nothing more, so workflows naming each other cannot loop).
 */
export function reportsFailure(execution: ExecutionRow): boolean {
  return execution.error_of_execution_id === null;
}

/** The error workflow's input: `{execution: {id, status, error, failed_node_id, started_at, finished_at}, workflow: {id, name}}`. */
export function errorInput(failed: ExecutionRow, failure: Failure, workflowName: string): unknown {
  return {
    execution: {
      id: failed.id,
      status: 'failed',
      error: failure.error,
      failed_node_id: failure.nodeId,
      started_at: failure.startedAt,
      finished_at: failure.finishedAt,
    },
    workflow: { id: failed.workflow_id, name: workflowName },
  };
}
