import type { GraphPlan } from './graph-plan.js';
import { newDataflowState, type DataflowState } from './dataflow.js';
import type { StepRow } from './execution-store.js';

/** A node that waits: a `wait` step, or the next attempt of a retried step. */
export interface WaitingNode {
  nodeId: string;
  stepId: string;
  attempt: number;
  resumeAt: string;
}

export interface RestoredState {
  state: DataflowState;
  waiting: Map<string, WaitingNode>;
  /** The latest attempt number per node (failed attempts included). */
  attempts: Map<string, number>;
  stepCount: number;
}

/**
 * Rebuilds an execution's dataflow from its step rows, in the order they were written. This is
 * what makes recovery exact: a completed row restores its output and ports, so the step never
 * runs again; a step that was in flight left no row and runs again.
 */
export function restoreState(plan: GraphPlan, rows: StepRow[]): RestoredState {
  const state = newDataflowState(plan);
  const waiting = new Map<string, WaitingNode>();
  const attempts = new Map<string, number>();
  for (const row of rows) {
    if (!plan.nodes.has(row.node_id)) continue;
    attempts.set(row.node_id, Math.max(attempts.get(row.node_id) ?? 0, row.attempt));
    switch (row.status) {
      case 'completed':
      case 'failed': {
        const ports = row.ports ? (JSON.parse(row.ports) as string[]) : [];
        waiting.delete(row.node_id);
        // A failed attempt without ports was retried or failed the run; only a failure routed to
        // the error port (on_error: continue) counts as a resolved node.
        if (row.status === 'failed' && ports.length === 0) break;
        state.nodes.set(row.node_id, row.status);
        state.outputs.set(row.node_id, row.output === null ? null : JSON.parse(row.output));
        state.ports.set(row.node_id, ports);
        state.completedOrder.push(row.node_id);
        break;
      }
      case 'skipped':
        state.nodes.set(row.node_id, 'skipped');
        if (row.ports) {
          state.ports.set(row.node_id, JSON.parse(row.ports) as string[]);
          state.outputs.set(row.node_id, row.output === null ? null : JSON.parse(row.output));
          state.nodes.set(row.node_id, 'completed');
          state.completedOrder.push(row.node_id);
        }
        break;
      case 'waiting':
        state.nodes.set(row.node_id, 'waiting');
        waiting.set(row.node_id, { nodeId: row.node_id, stepId: row.id, attempt: row.attempt, resumeAt: row.resume_at ?? row.inserted_at });
        break;
      default:
        break;
    }
  }
  return { state, waiting, attempts, stepCount: rows.length };
}
