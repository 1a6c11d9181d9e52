import type { ChildResult } from '../execution-store.js';
import type { LoopProgress } from './run-host.js';
import type { FrameState, WaitingNode } from './restore-state.js';

/**
 * A run's waiting nodes (execution-run.ts): which is due, when the next is, which children they
 * await. What tells: the run's loops (a loop waits while its current iteration does) and the
 * children that ended.
 */
export interface WaitState {
  readonly loops: ReadonlyMap<string, LoopProgress>;
  readonly children: ReadonlyMap<string, ChildResult>;
  /** Waiting approval steps (by row id) decided since the run parked: due now. */
  readonly decided: ReadonlySet<string>;
}

/** The first waiting node of the frame that is due at `now` (a child ended, a timer passed, a loop's iteration has one). */
export function nextDue(state: WaitState, frame: FrameState, now: string): WaitingNode | undefined {
  for (const waiting of frame.waiting.values()) if (isDue(state, waiting, now)) return waiting;
  return undefined;
}

function isDue(state: WaitState, waiting: WaitingNode, now: string): boolean {
  const current = waiting.loop ? state.loops.get(waiting.nodeId)?.current : undefined;
  if (current) return nextDue(state, current, now) !== undefined;
  if (waiting.awaiting !== null) return state.children.has(waiting.awaiting);
  if (waiting.stepId !== null && state.decided.has(waiting.stepId)) return true;
  return waiting.resumeAt !== null && waiting.resumeAt <= now;
}

/** Ids of the child executions the frame's waiting call steps await (its loops' current iterations included). */
export function awaitedChildren(state: WaitState, frame: FrameState): string[] {
  const ids: string[] = [];
  for (const waiting of frame.waiting.values()) {
    if (waiting.awaiting !== null) ids.push(waiting.awaiting);
    const current = waiting.loop ? state.loops.get(waiting.nodeId)?.current : undefined;
    if (current) ids.push(...awaitedChildren(state, current));
  }
  return ids;
}

/** When the frame is next due by time (null: it only waits for child executions). */
export function earliestDue(state: WaitState, frame: FrameState): string | null {
  let best: string | null = null;
  for (const waiting of frame.waiting.values()) {
    const current = waiting.loop ? state.loops.get(waiting.nodeId)?.current : undefined;
    const at = current ? earliestDue(state, current) : waiting.resumeAt;
    if (at !== null && (best === null || at < best)) best = at;
  }
  return best;
}
