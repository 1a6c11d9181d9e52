import type { ExecutionStatus } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { findStepDefinition } from '../../steps/registry.js';
import type { ChildRequest } from './run-types.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';
import type { GraphPlan } from './graph-plan.js';
import { json, stepRow, type StepOwner } from '../commit/step-rows.js';

/** Who an execution is: the columns fixed when it is created. */
export type ExecutionIdentity = Omit<
  ExecutionRow,
  | 'status'
  | 'started_at'
  | 'finished_at'
  | 'inserted_at'
  | 'updated_at'
  | 'output'
  | 'error'
  | 'step_count'
  | 'run_at'
  | 'lease_owner'
  | 'lease_expires_at'
  | 'response'
  | 'concurrency_limit'
  | 'waiter'
  | 'error_workflow_execution_id'
  | 'error_workflow_skipped'
>;

/** A top-level run (`/run`, a webhook delivery). */
export function runIdentity(start: {
  workspaceId: string;
  workflowId: string;
  snapshotId: string;
  userId: string | null;
  trigger: unknown;
  replayOf?: string;
}): ExecutionIdentity {
  return {
    id: newId(),
    workspace_id: start.workspaceId,
    workflow_id: start.workflowId,
    workflow_snapshot_id: start.snapshotId,
    triggered_by_step_id: null,
    parent_execution_id: null,
    call_depth: 0,
    retry_of_execution_id: null,
    user_id: start.userId,
    context: null,
    inputs: json(start.trigger),
    replay_of_execution_id: start.replayOf ?? null,
    rerun_of_execution_id: null,
    rerun_from_node_id: null,
    error_of_execution_id: null,
  };
}

/** A call_workflow child: its trigger payload is `{method: "CALL", headers: {}, query: {}, body: input}`. */
export function childIdentity(request: ChildRequest, snapshotId: string): { identity: ExecutionIdentity; trigger: unknown } {
  const trigger = { method: 'CALL', headers: {}, query: {}, body: request.input };
  const identity: ExecutionIdentity = {
    id: request.childId,
    workspace_id: request.parent.workspace_id,
    workflow_id: request.workflowId,
    workflow_snapshot_id: snapshotId,
    triggered_by_step_id: request.stepId,
    parent_execution_id: request.parent.id,
    call_depth: request.parent.call_depth + 1,
    retry_of_execution_id: null,
    user_id: request.parent.user_id,
    context: null,
    inputs: json(trigger),
    replay_of_execution_id: null,
    rerun_of_execution_id: null,
    rerun_from_node_id: null,
    // A child of an error workflow's run is part of handling that failure: it starts no error
    // workflow either (error workflow A calling C, C naming A, would loop otherwise).
    error_of_execution_id: request.parent.error_of_execution_id,
  };
  return { identity, trigger };
}

/** The first rows of a run: fired triggers complete with the payload, unfired roots are skipped. */
export function rootRows(
  plan: GraphPlan,
  identity: Pick<ExecutionIdentity, 'id' | 'workspace_id'>,
  trigger: unknown,
  now: string,
  firedRoots?: string[],
): StepRow[] {
  const fired = new Set(firedRoots ?? plan.roots);
  const owner: StepOwner = {
    executionId: identity.id,
    workspaceId: identity.workspace_id,
    loopNodeId: null,
    iterIndex: null,
    savePayloads: plan.settings.savePayloads,
  };
  return plan.roots.flatMap((nodeId) => {
    const node = plan.nodes.get(nodeId)!;
    if (!fired.has(nodeId))
      return [
        stepRow(owner, {
          nodeId,
          status: 'skipped',
          attempt: 1,
          startedAt: null,
          finishedAt: null,
          durationMs: null,
          kind: node.type,
          now,
        }),
      ];
    // A trigger's output is the trigger payload; other roots run with it as their input.
    if (findStepDefinition(node.type)?.trigger) {
      return [
        stepRow(owner, {
          nodeId,
          status: 'completed',
          attempt: 1,
          startedAt: now,
          finishedAt: now,
          durationMs: 0,
          kind: node.type,
          output: trigger,
          ports: ['out'],
          now,
        }),
      ];
    }
    return [];
  });
}

/**
 * The retry of a failed execution: same snapshot and trigger payload, linked by
 * `retry_of_execution_id`, starting with copies of the completed and skipped steps (outputs
 * kept, so they do not run again). Without saved payloads (`save_step_payloads: false`) there
 * are no outputs to keep: the retry starts from the trigger.
 */
export function retryStart(
  plan: GraphPlan,
  failed: ExecutionRow,
  rows: StepRow[],
  userId: string | null,
  now: string,
): { identity: ExecutionIdentity; steps: StepRow[] } {
  const id = newId();
  const {
    id: _old,
    status: _status,
    started_at: _s,
    finished_at: _f,
    inserted_at: _i,
    updated_at: _u,
    output: _o,
    error: _e,
    step_count: _c,
    run_at: _r,
    lease_owner: _lo,
    lease_expires_at: _le,
    response: _res,
    concurrency_limit: _cl,
    waiter: _w,
    error_workflow_execution_id: _ewe,
    error_workflow_skipped: _ews,
    ...same
  } = failed;
  const identity = Object.assign(same, { id, retry_of_execution_id: failed.id, user_id: userId });
  if (plan.settings.savePayloads) {
    const kept = rows.filter(
      (row) => row.status === 'completed' || row.status === 'skipped' || (row.status === 'failed' && row.ports !== null),
    );
    return { identity, steps: kept.map((row) => reusedCopy(row, id)) };
  }
  const fired = rows
    .filter((row) => row.loop_node_id === null && plan.roots.includes(row.node_id) && row.status !== 'skipped')
    .map((row) => row.node_id);
  return { identity, steps: rootRows(plan, identity, failed.inputs === null ? null : JSON.parse(failed.inputs), now, fired) };
}

/**
 * A new execution's row: `running` (it starts now) or `pending` (due now, waiting for a slot or
 * a worker's claim). `waiter`: the process that will wait for its answer, when another process
 * may run it (see cluster.ts).
 */
export function newExecutionRow(
  identity: ExecutionIdentity,
  status: Extract<ExecutionStatus, 'running' | 'pending'>,
  stepCount: number,
  now: string,
  concurrencyLimit: number | null,
  waiter: string | null,
): ExecutionRow {
  // Every column written out: a spread of `identity` followed by more keys is the slow,
  // garbage-promoting form on Node 20 (see StepOwner in step-rows.ts).
  return {
    id: identity.id,
    workspace_id: identity.workspace_id,
    workflow_id: identity.workflow_id,
    workflow_snapshot_id: identity.workflow_snapshot_id,
    triggered_by_step_id: identity.triggered_by_step_id,
    parent_execution_id: identity.parent_execution_id,
    call_depth: identity.call_depth,
    retry_of_execution_id: identity.retry_of_execution_id,
    user_id: identity.user_id,
    context: identity.context,
    inputs: identity.inputs,
    status,
    started_at: status === 'running' ? now : null,
    finished_at: null,
    inserted_at: now,
    updated_at: now,
    output: null,
    error: null,
    step_count: stepCount,
    run_at: status === 'pending' ? now : null,
    lease_owner: null,
    lease_expires_at: null,
    response: null,
    concurrency_limit: concurrencyLimit,
    waiter,
    replay_of_execution_id: identity.replay_of_execution_id,
    rerun_of_execution_id: identity.rerun_of_execution_id,
    rerun_from_node_id: identity.rerun_from_node_id,
    error_of_execution_id: identity.error_of_execution_id,
    error_workflow_execution_id: null,
    error_workflow_skipped: null,
  };
}

/** A step record of another execution copied into `executionId`, naming the record it copies (`reused`). */
export function reusedCopy(row: StepRow, executionId: string): StepRow {
  return Object.assign({}, row, { id: newId(), workflow_execution_id: executionId, reused_from_step_id: row.id });
}
