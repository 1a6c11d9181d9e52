import type { GraphNode } from '../../graph/graph-types.js';
import { newId } from '../../lib/ids.js';
import type { RunHost } from './run-host.js';
import type { ChildResult, Outcome } from './run-types.js';
import type { AttemptOutcome } from './node-runner.js';
import type { FrameState, WaitingNode } from './restore-state.js';
import { nextRetryDelay } from './retry-policy.js';
import { serializeStepError, StepError } from '../step-errors.js';

/**
 * Starts the child of a call_workflow step. Awaited: the step's waiting row (naming the child)
 * and the child's creation are queued for the same commit, and the step waits; if they land
 * apart and the process dies, the run finds the child missing and calls again with the same
 * id. Fire-and-forget: the child is committed first and the step completes with its id (a
 * crash in between re-runs the step, as for any step in flight).
 */
export async function startCall(
  run: RunHost,
  frame: FrameState,
  node: GraphNode,
  attempt: number,
  input: unknown,
  outcome: Extract<AttemptOutcome, { type: 'call' }>,
  resumed: WaitingNode | undefined,
  startedAt: string,
): Promise<Outcome> {
  const request = { parent: run.execution, workflowId: outcome.workflowId, input: outcome.input };
  const failure = (error: unknown): Outcome => {
    const serialized = serializeStepError(error);
    return { type: 'failed', error: serialized, retryInMs: nextRetryDelay(node.retry, attempt, serialized), kind: 'call_workflow' };
  };
  if (!outcome.wait) {
    const childId = newId();
    const stepId = newId();
    try {
      await run.deps.startChild(Object.assign({}, request, { childId, stepId }));
    } catch (error) {
      return failure(error);
    }
    return { type: 'completed', output: { execution_id: childId }, ports: ['out'], kind: 'call_workflow', rowId: stepId };
  }
  const childId = resumed?.awaiting ?? newId();
  const row = run.row(frame, {
    nodeId: node.id,
    status: 'waiting',
    attempt,
    startedAt,
    finishedAt: null,
    durationMs: null,
    kind: 'call_workflow',
    input,
    awaitingExecutionId: childId,
    now: startedAt,
  });
  const stepId = resumed?.stepId ?? row.id;
  run.record(row, resumed?.stepId ?? undefined);
  // The child's look-ups start before the parent's write is queued, so both land in one group
  // commit instead of the look-ups waiting behind the parent's commit for the connection.
  const starting = run.deps.startChild(Object.assign({}, request, { childId, stepId }));
  const [written, started] = await Promise.allSettled([run.persist(), starting]);
  if (written.status === 'rejected') throw written.reason;
  if (!written.value) return { type: 'cancelled' };
  if (started.status === 'rejected') {
    // The call could not be made: the waiting row becomes this attempt's failure.
    return Object.assign(failure(started.reason), { startedAt, replaces: stepId }) as Outcome;
  }
  run.park(frame, { nodeId: node.id, stepId, attempt, resumeAt: null, awaiting: childId, startedAt, loop: false });
  return { type: 'call', workflowId: outcome.workflowId, input: outcome.input, wait: true };
}

/** The outcome of a call step whose child ended. A failed or cancelled child fails the step (retryable). */
export function childOutcome(node: GraphNode, attempt: number, childId: string, child: ChildResult): Outcome {
  if (child.status === 'completed') return { type: 'completed', output: child.output, ports: ['out'], kind: 'call_workflow' };
  const cause = child.error as { message?: unknown } | null;
  const message =
    child.status === 'cancelled' ? 'was cancelled' : `failed: ${typeof cause?.message === 'string' ? cause.message : 'unknown error'}`;
  const error = serializeStepError(
    new StepError(`the called workflow's execution ${childId} ${message}`, {
      code: child.status === 'cancelled' ? 'child_cancelled' : 'child_failed',
      details: { execution_id: childId, error: child.error },
    }),
  );
  return { type: 'failed', error, retryInMs: nextRetryDelay(node.retry, attempt, error), kind: 'call_workflow' };
}
