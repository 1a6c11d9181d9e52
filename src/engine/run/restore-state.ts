import type { GraphPlan } from './graph-plan.js';
import { Dataflow } from './dataflow.js';
import type { StepRow } from '../execution-store.js';
import { LOOP_BODY_PORT } from '../../steps/loop/index.js';
import { isJournalRow } from '../../steps/step-journal.js';

/**
 * A node that waits: a `wait` step, the next attempt of a retried step, a `call_workflow` step
 * awaiting its child execution, or a loop whose current iteration waits.
 */
export interface WaitingNode {
  nodeId: string;
  /** The waiting row (null for a loop: its body's rows wait, not the loop's). */
  stepId: string | null;
  attempt: number;
  /** When it is due; null when it waits for a child execution instead. */
  resumeAt: string | null;
  /** The child execution a call_workflow step (or a loop body's) waits for. */
  awaiting: string | null;
  /** When the waiting attempt started (a call's duration spans its child's run). */
  startedAt: string | null;
  loop: boolean;
}

/** One loop iteration a frame runs: the loop node, the position and the element. */
export interface IterationOf {
  nodeId: string;
  index: number;
  item: unknown;
}

/**
 * The state of one frame: the whole run (`iteration` null) or one iteration of a loop body.
 * `bodyRows` holds the rows of loops that have not finished, by loop node id, until the loop
 * runs again and rebuilds its iterations from them.
 */
export interface FrameState {
  plan: GraphPlan;
  flow: Dataflow;
  waiting: Map<string, WaitingNode>;
  /** The latest attempt number per node (failed attempts included). */
  attempts: Map<string, number>;
  iteration: IterationOf | null;
  bodyRows: Map<string, StepRow[]>;
  /** Attempts left `running` by a process that died: recorded failed, and their nodes run again. */
  interrupted: StepRow[];
}

const parse = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/**
 * Rebuilds a frame from its step rows, in the order they were written. This is what makes
 * recovery exact: a completed row restores its output and ports, so the step never runs again;
 * a pure step that was in flight left no row and runs again; a step with effects in flight left
 * a `running` row, and runs again as its next attempt. Rows of loop bodies are set aside for
 * their loop; a loop whose current iteration waits is itself waiting.
 */
export function restoreFrame(
  plan: GraphPlan,
  rows: StepRow[],
  inherited: Record<string, unknown>,
  iteration: IterationOf | null,
): FrameState {
  const flow = new Dataflow(plan, inherited);
  const frame: FrameState = { plan, flow, waiting: new Map(), attempts: new Map(), iteration, bodyRows: new Map(), interrupted: [] };
  // An iteration starts with its loop node resolved through `body`, carrying the item.
  if (iteration) flow.resolve(iteration.nodeId, 'completed', iteration.item, [LOOP_BODY_PORT]);
  const recorded = new Set<string>();
  for (const row of rows) {
    // A node's journal (the agent's model turns and tool calls) says nothing of whether the node completed.
    if (isJournalRow(row)) continue;
    if (iteration === null && row.loop_node_id !== null) {
      const list = frame.bodyRows.get(row.loop_node_id) ?? [];
      list.push(row);
      frame.bodyRows.set(row.loop_node_id, list);
      continue;
    }
    if (!plan.nodes.has(row.node_id)) continue;
    recorded.add(row.node_id);
    applyRow(frame, row);
  }
  for (const [loopId, bodyRows] of frame.bodyRows) {
    if (flow.nodes.get(loopId) !== 'pending') continue;
    const last = Math.max(...bodyRows.map((row) => row.iter_index ?? 0));
    const waits = bodyRows.filter((row) => row.iter_index === last && row.status === 'waiting');
    if (waits.length === 0) continue;
    const dueTimes = waits
      .map((row) => row.resume_at)
      .filter((at): at is string => at !== null)
      .sort();
    const awaited = waits.find((row) => row.awaiting_workflow_execution_id !== null)?.awaiting_workflow_execution_id ?? null;
    frame.waiting.set(loopId, {
      nodeId: loopId,
      stepId: null,
      attempt: 1,
      resumeAt: dueTimes[0] ?? null,
      awaiting: awaited,
      startedAt: null,
      loop: true,
    });
    flow.markWaiting(loopId);
  }
  // Skips the replay derived again were recorded already; the others are still to be written.
  flow.forgetSkipped(recorded);
  // Fired roots that are not triggers run with the payload (they leave no row until they end).
  for (const root of plan.roots) flow.readyRoot(root);
  return frame;
}

function applyRow(frame: FrameState, row: StepRow): void {
  const { flow, waiting, attempts } = frame;
  const id = row.node_id;
  attempts.set(id, Math.max(attempts.get(id) ?? 0, row.attempt));
  const ports = row.ports ? (JSON.parse(row.ports) as string[]) : null;
  switch (row.status) {
    case 'completed':
    case 'failed':
      waiting.delete(id);
      // A failed attempt without ports was retried or failed the run; only a failure routed to
      // the error port (on_error: continue) resolves the node.
      if (row.status === 'failed' && (ports === null || ports.length === 0)) break;
      flow.resolve(id, row.status, parse(row.output), ports ?? []);
      break;
    case 'skipped':
      // A disabled node is recorded skipped but passes its input on through its ports.
      if (ports) flow.resolve(id, 'completed', parse(row.output), ports);
      else flow.skip(id);
      break;
    case 'running':
      // Its process died during the attempt (the row is written before an effect starts): the
      // node stays unresolved, so it is ready again, as the next attempt.
      frame.interrupted.push(row);
      break;
    case 'waiting':
      flow.markWaiting(id);
      waiting.set(id, {
        nodeId: id,
        stepId: row.id,
        attempt: row.attempt,
        resumeAt: row.awaiting_workflow_execution_id === null ? (row.resume_at ?? row.inserted_at) : null,
        awaiting: row.awaiting_workflow_execution_id,
        // A call's duration spans its child's run; a wait's row is rewritten when it resumes.
        startedAt: row.awaiting_workflow_execution_id === null ? null : row.started_at,
        loop: false,
      });
      break;
    default:
      break;
  }
}
