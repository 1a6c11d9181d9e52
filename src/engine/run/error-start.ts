import { newId } from '../../lib/ids.js';
import { json } from '../commit/step-rows.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';
import { newExecutionRow, rootRows, type ExecutionIdentity } from './execution-start.js';
import type { GraphPlan } from './graph-plan.js';
import { errorInput, reportsFailure, type ErrorRunPreparer, type ErrorRunScheduling, type ErrorWorkflowResolver } from './error-run.js';

/** The error workflow's execution of a failed one, and the engine's preparer of it (error-run.ts says why it is exactly once). */

/**
 * The engine's preparer: one look-up (the resolver's) per failure of a top-level execution, none
 * for other ends, so runs that complete pay nothing for the feature.
 */
export function errorRunPreparer(resolve: ErrorWorkflowResolver, scheduling: ErrorRunScheduling): ErrorRunPreparer {
  return async (failed, failure) => {
    if (!reportsFailure(failed)) return null;
    const target = await resolve({ workspaceId: failed.workspace_id, workflowId: failed.workflow_id });
    if (target === null) return null;
    if ('skipped' in target) return { record: JSON.stringify({ skipped: target.skipped }) };
    const plan = await scheduling.plan(target.snapshotId);
    const { row, steps } = errorStart(plan, failed, target, errorInput(failed, failure, target.workflowName), scheduling.now());
    return {
      record: JSON.stringify({ execution_id: row.id }),
      admit: (trx) => scheduling.admit(trx, row, steps),
      committed: () => scheduling.start(row, plan, steps),
    };
  };
}

/**
 * The error workflow's new execution, `pending` (a slot or a worker's claim starts it): its
 * trigger payload is `{method: "ERROR", headers: {}, query: {}, body: input}` and
 * `error_of_execution_id` names the failed execution.
 */
export function errorStart(
  plan: GraphPlan,
  failed: ExecutionRow,
  target: { workflowId: string; snapshotId: string },
  input: unknown,
  now: string,
): { row: ExecutionRow; steps: StepRow[] } {
  const trigger = { method: 'ERROR', headers: {}, query: {}, body: input };
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
    inputs: json(trigger),
    replay_of_execution_id: null,
    rerun_of_execution_id: null,
    rerun_from_node_id: null,
    error_of_execution_id: failed.id,
  };
  const steps = rootRows(plan, identity, trigger, now);
  return { row: newExecutionRow(identity, 'pending', steps.length, now, plan.settings.concurrencyLimit, null), steps };
}
