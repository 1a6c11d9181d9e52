import type { GraphNode } from '../../graph/graph-types.js';
import { formatMicros, parseTimestampMicros } from '../../lib/clock.js';
import type { RunHost } from './run-host.js';
import type { FrameState } from './restore-state.js';
import type { StepRecord } from '../commit/step-rows.js';
import type { FrameEnd } from './run-types.js';

/** What a run (ExecutionRun, through RunHost) does with a failed attempt, and small helpers of its frames. */

/**
 * Records a failed attempt: retried (at once, or waiting `retryInMs`), passed on through the
 * error port (`on_error: continue`), or ending the frame (the returned end).
 */
export function recordFailure(
  run: RunHost,
  frame: FrameState,
  node: GraphNode,
  failed: StepRecord,
  retryInMs: number | null,
  stepId: string | undefined,
): FrameEnd | null {
  const { flow } = frame;
  const { nodeId, attempt } = failed;
  const error = failed.error!;
  if (retryInMs !== null) {
    run.record(run.row(frame, failed), stepId, false);
    if (retryInMs === 0) {
      // Ready again at once: its inputs are still resolved, and the attempt count goes on.
      flow.requeue(nodeId);
      return null;
    }
    const resumeAt = formatMicros((run.deps.clock.nowMs() + retryInMs) * 1000);
    const next = run.row(frame, {
      nodeId,
      status: 'waiting',
      attempt: attempt + 1,
      startedAt: null,
      finishedAt: null,
      durationMs: null,
      kind: failed.kind,
      resumeAt,
      now: failed.now,
    });
    run.record(next);
    run.park(frame, { nodeId, stepId: next.id, attempt: attempt + 1, resumeAt, awaiting: null, startedAt: null, loop: false });
    return null;
  }
  if (node.on_error === 'continue') {
    const output = { error };
    flow.resolve(nodeId, 'failed', output, ['error']);
    failed.output = output;
    failed.ports = ['error'];
    run.record(run.row(frame, failed), stepId);
    return null;
  }
  run.record(run.row(frame, failed), stepId);
  return { status: 'failed', nodeId, error };
}

/** Milliseconds between two canonical timestamps, to the microsecond. */
export function elapsedMs(from: string, to: string): number {
  return ((parseTimestampMicros(to) ?? 0) - (parseTimestampMicros(from) ?? 0)) / 1000;
}
