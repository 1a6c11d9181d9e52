import { newId } from '../../lib/ids.js';
import { json } from '../commit/step-rows.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';
import { newExecutionRow, rootRows, type ExecutionIdentity } from './execution-start.js';
import type { GraphPlan } from './graph-plan.js';
import { errorInput, reportsFailure, type ErrorRunPreparer, type ErrorRunScheduling, type ErrorWorkflowResolver } from './error-run.js';

/** The error workflow's execution of a failed one, and the engine's preparer of it (error-run.ts says why it is exactly once). */

/**
 * The engine's preparer: one look-up (the resolver's) per failed execution, none for other ends,
 * so runs that complete pay nothing for the feature. An error workflow's own failure starts
 * nothing and records `loop` (when its workflow names an error workflow at all).
 */
export function errorRunPreparer(resolve: ErrorWorkflowResolver, scheduling: ErrorRunScheduling): ErrorRunPreparer {
  return async (failed, failure) => {
    const target = await resolve({ workspaceId: failed.workspace_id, workflowId: failed.workflow_id });
    if (target === null) return null;
    if (!reportsFailure(failed)) return { record: { error_workflow_execution_id: null, error_workflow_skipped: 'loop' } };
    if ('skipped' in target) return { record: { error_workflow_execution_id: null, error_workflow_skipped: target.skipped } };
    const plan = await scheduling.plan(target.snapshotId);
    const { row, steps } = errorStart(plan, failed, target, errorInput(failed, failure, target.workflowName), scheduling.now());
    return {
      record: { error_workflow_execution_id: row.id, error_workflow_skipped: null },
      admit: (trx) => scheduling.admit(trx, row, steps),
      committed: () => scheduling.start(row, plan, steps),
    };
  };
}

/**
 * The error workflow's new execution, top-level and `pending` (a slot or a worker's claim starts
 * it): its trigger payload is the input itself, so its fired trigger step, whatever its type,
 * outputs the input (`{{ trigger.execution.id }}`), and `error_of_execution_id` names the failed
 * execution.
 */
export function errorStart(
  plan: GraphPlan,
  failed: ExecutionRow,
  target: { workflowId: string; snapshotId: string },
  input: unknown,
  now: string,
): { row: ExecutionRow; steps: StepRow[] } {
  const identity: ExecutionIdentity = {
    id: newId(),
    workspace_id: failed.workspace_id,
    workflow_id: target.workflowId,
    workflow_snapshot_id: target.snapshotId,
    triggered_by_step_id: null,
    parent_execution_id: null,
    call_depth: 0,
    retry_of_execution_id: null,
    user_id: failed.user_id,
    context: null,
    inputs: json(input),
    replay_of_execution_id: null,
    rerun_of_execution_id: null,
    rerun_from_node_id: null,
    error_of_execution_id: failed.id,
  };
  const steps = rootRows(plan, identity, input, now);
  return { row: newExecutionRow(identity, 'pending', steps.length, now, plan.settings.concurrencyLimit, null), steps };
}
