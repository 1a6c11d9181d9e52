import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Graph } from '../../graph/graph-types.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { listSteps, type ExecutionRow, type StepRow } from '../execution-store.js';
import type { GraphPlan } from './graph-plan.js';
import type { PlanCache } from './plan-cache.js';
import { reusedCopy, rootRows, type ExecutionIdentity } from './execution-start.js';

/** Why a re-run cannot start from the node asked for; the service answers 422 with a pointer. */
export type RerunRefusal =
  | { reason: 'unknown_node' }
  | { reason: 'in_loop_body'; loopNodeId: string }
  | { reason: 'payloads_not_kept' }
  | { reason: 'upstream_incomplete'; nodeId: string };

export interface RerunRequest {
  source: ExecutionRow;
  /** The source's step rows, every frame and attempt. */
  rows: StepRow[];
  fromNodeId: string;
  /** The snapshot the re-run runs: the source's, or (draft) the live canvas frozen now. */
  snapshotId: string;
  /** Whether the source's plan kept step outputs (`save_step_payloads`): reuse needs them. */
  sourceKeptPayloads: boolean;
  userId: string | null;
  now: string;
}

/** What a re-run runs: a snapshot (`graph`: the live canvas of a draft re-run, frozen as it) from a node. */
export interface RerunTarget {
  snapshotId: string;
  graph?: Graph;
  fromNodeId: string;
  userId: string | null;
}

/** Reads what a re-run needs (both plans, the source's records) and makes its start (rerunStart). */
export async function prepareRerun(
  parts: { db: Kysely<Database>; plans: PlanCache; clock: Clock },
  source: ExecutionRow,
  target: RerunTarget,
): Promise<{ identity: ExecutionIdentity; steps: StepRow[]; plan: GraphPlan } | RerunRefusal> {
  const [plan, sourcePlan, rows] = await Promise.all([
    parts.plans.load(target.snapshotId, target.graph),
    parts.plans.load(source.workflow_snapshot_id),
    listSteps(parts.db, source.id),
  ]);
  const start = rerunStart(plan, {
    source,
    rows,
    fromNodeId: target.fromNodeId,
    snapshotId: target.snapshotId,
    sourceKeptPayloads: sourcePlan.settings.savePayloads,
    userId: target.userId,
    now: parts.clock.now(),
  });
  return 'reason' in start ? start : { identity: start.identity, steps: start.steps, plan };
}

/**
 * A re-run of `source` from `fromNodeId` (run control, docs/run-control.md): a new execution of
 * `plan` that starts with copies of the source's finished records (completed, skipped, or failed
 * and routed on through the error port) of every top-level node that is neither `fromNodeId`
 * nor downstream of it, loop iterations included, each naming the record it copies. Those nodes
 * do not run again (no effect is repeated); `fromNodeId` and what follows it do. Every node
 * upstream of `fromNodeId` must have such a record, or the re-run is refused: its input would
 * be missing. A root in the re-run part (a re-run from the trigger) fires with the source's
 * trigger payload again.
 */
export function rerunStart(plan: GraphPlan, request: RerunRequest): { identity: ExecutionIdentity; steps: StepRow[] } | RerunRefusal {
  const { source, fromNodeId } = request;
  if (!plan.nodes.has(fromNodeId)) {
    for (const [loopNodeId, body] of plan.loops) if (body.nodes.has(fromNodeId)) return { reason: 'in_loop_body', loopNodeId };
    return { reason: 'unknown_node' };
  }
  const rerun = reachable(plan.outgoing, fromNodeId, (edge) => edge.target);
  const upstream = reachable(plan.incoming, fromNodeId, (edge) => edge.source);
  upstream.delete(fromNodeId);
  if (upstream.size > 0 && !request.sourceKeptPayloads) return { reason: 'payloads_not_kept' };

  const owners = loopOwners(plan);
  const kept = request.rows.filter((row) => {
    const owner = row.loop_node_id === null ? row.node_id : (owners.get(row.loop_node_id) ?? row.loop_node_id);
    return !rerun.has(owner) && isFinished(row);
  });
  const finishedAtTop = new Set(kept.filter((row) => row.loop_node_id === null).map((row) => row.node_id));
  for (const nodeId of plan.order) {
    if (upstream.has(nodeId) && !finishedAtTop.has(nodeId)) return { reason: 'upstream_incomplete', nodeId };
  }

  const id = newId();
  const identity: ExecutionIdentity = {
    id,
    workspace_id: source.workspace_id,
    workflow_id: source.workflow_id,
    workflow_snapshot_id: request.snapshotId,
    triggered_by_step_id: null,
    parent_execution_id: null,
    call_depth: 0,
    retry_of_execution_id: null,
    user_id: request.userId,
    context: null,
    inputs: source.inputs,
    replay_of_execution_id: null,
    rerun_of_execution_id: source.id,
    rerun_from_node_id: fromNodeId,
    error_of_execution_id: null,
  };
  const steps = kept.map((row) => reusedCopy(row, id));
  const rerunRoots = plan.roots.filter((nodeId) => rerun.has(nodeId));
  if (rerunRoots.length > 0) {
    const fired = request.rows
      .filter((row) => row.loop_node_id === null && rerunRoots.includes(row.node_id) && row.status !== 'skipped')
      .map((row) => row.node_id);
    const trigger = source.inputs === null ? null : JSON.parse(source.inputs);
    const roots = rootRows(plan, identity, trigger, request.now, fired);
    steps.push(...roots.filter((row) => rerun.has(row.node_id)));
  }
  return { identity, steps };
}

function isFinished(row: StepRow): boolean {
  return row.status === 'completed' || row.status === 'skipped' || (row.status === 'failed' && row.ports !== null);
}

/** `start` and every node reached from it along `edges` (one direction). */
function reachable<E>(edges: Map<string, E[]>, start: string, next: (edge: E) => string): Set<string> {
  const seen = new Set([start]);
  const stack = [start];
  while (stack.length > 0) {
    for (const edge of edges.get(stack.pop()!) ?? []) {
      const node = next(edge);
      if (!seen.has(node)) {
        seen.add(node);
        stack.push(node);
      }
    }
  }
  return seen;
}

/** The top-level loop node that owns each loop: itself, or the loop whose body holds it (a nested loop). */
function loopOwners(plan: GraphPlan): Map<string, string> {
  const owners = new Map<string, string>();
  for (const [loopId, body] of plan.loops) {
    for (const nodeId of body.nodes.keys()) owners.set(nodeId, loopId);
  }
  return owners;
}
