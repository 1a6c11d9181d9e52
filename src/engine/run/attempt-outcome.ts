import type { GraphNode } from '../../graph/graph-types.js';
import { formatMicros } from '../../lib/clock.js';
import { json, type StepRecord } from '../commit/step-rows.js';
import type { FrameState, WaitingNode } from './restore-state.js';
import { nextRetryDelay } from './retry-policy.js';
import { elapsedMs, recordFailure } from './run-frames.js';
import type { RunHost } from './run-host.js';
import type { FrameEnd, Outcome } from './run-types.js';
import type { SerializedStepError } from '../step-errors.js';

/** When and how an attempt ran, as the frame saw it (ExecutionRun.runFrame). */
export interface AttemptTimes {
  attempt: number;
  input: unknown;
  /** The waiting node this attempt resumed (a retry's delay, a wait, a child's end), if any. */
  resumed: WaitingNode | undefined;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** The row the attempt's own row replaces (its `running` trace, or the waiting row resumed). */
  replaces: string | undefined;
}

/**
 * What an attempt's outcome writes and resolves: a completed node's row and ports (its effect
 * committed at once, a respond step's answer put on the execution), a wait, a call or a loop
 * that waits, or a failure (retried, routed to the error port, or ending the frame). Answers
 * the frame's end when the frame must stop here, else null (the frame goes on).
 */
export async function settleOutcome(
  host: RunHost,
  frame: FrameState,
  node: GraphNode,
  outcome: Outcome,
  times: AttemptTimes,
): Promise<FrameEnd | null> {
  const { attempt, input, resumed, startedAt, finishedAt, durationMs, replaces } = times;
  const { flow } = frame;
  const nodeId = node.id;
  switch (outcome.type) {
    case 'completed': {
      const began = outcome.startedAt ?? resumed?.startedAt ?? startedAt;
      const took = began === startedAt ? durationMs : Math.max(0, Math.round(elapsedMs(began, finishedAt)));
      const row = host.row(frame, {
        id: outcome.rowId,
        nodeId,
        attempt,
        input,
        now: finishedAt,
        status: 'completed',
        startedAt: began,
        finishedAt,
        durationMs: took,
        kind: outcome.kind,
        provider: outcome.provider ?? null,
        output: outcome.output,
        logs: outcome.logs ?? null,
        ports: outcome.ports,
        memoryBytes: outcome.memoryBytes ?? null,
        reductions: outcome.reductions ?? null,
        resumeAt: resumed?.resumeAt ?? null,
        awaitingExecutionId: resumed?.awaiting ?? null,
      });
      if (outcome.effect) {
        const applied = await host.commitEffect(outcome.effect, row, replaces);
        if (applied.type === 'cancelled') return { status: 'cancelled' };
        if (applied.type === 'failed') {
          const failed = failedRecord(nodeId, times, outcome.kind, applied.error, began, took);
          return recordFailure(host, frame, node, failed, nextRetryDelay(node.retry, attempt, applied.error), replaces);
        }
        flow.resolve(nodeId, 'completed', applied.output, outcome.ports);
        return null;
      }
      flow.resolve(nodeId, 'completed', outcome.output, outcome.ports);
      host.record(row, replaces);
      // What a respond step answered goes on the execution; its caller is answered once the
      // commit holding it is durable (see sendResponse).
      if (node.type === 'respond_to_webhook') host.respond(json(outcome.output));
      return null;
    }
    case 'wait': {
      const resumeAt = formatMicros(outcome.resumeAtMs * 1000);
      const row = host.row(frame, {
        id: outcome.rowId,
        nodeId,
        attempt,
        input,
        status: 'waiting',
        startedAt,
        finishedAt: null,
        durationMs: null,
        kind: outcome.kind ?? 'wait',
        output: outcome.output,
        logs: outcome.logs ?? null,
        resumeAt,
        now: startedAt,
      });
      // An agent's attempt waiting for a tool's approval replaces its own `running` row (it has effects).
      host.record(row, replaces);
      host.park(frame, { nodeId, stepId: row.id, attempt, resumeAt, awaiting: null, startedAt: null, loop: false });
      return null;
    }
    case 'call':
      // `call()` answers with the step waiting for its child: the waiting row is recorded.
      return null;
    case 'loop_waiting':
      host.park(frame, { nodeId, stepId: null, attempt, resumeAt: outcome.runAt, awaiting: null, startedAt: null, loop: true });
      return null;
    case 'failed': {
      const failed = failedRecord(
        nodeId,
        times,
        outcome.kind,
        outcome.error,
        outcome.startedAt ?? resumed?.startedAt ?? startedAt,
        durationMs,
      );
      return recordFailure(host, frame, node, failed, outcome.retryInMs, outcome.replaces ?? replaces);
    }
  }
  return null;
}

/** The record of a failed attempt: `startedAt` and `durationMs` as the attempt took them (a resumed call began earlier). */
function failedRecord(
  nodeId: string,
  { attempt, input, resumed, finishedAt }: AttemptTimes,
  kind: string,
  error: SerializedStepError,
  startedAt: string,
  durationMs: number,
): StepRecord {
  return {
    nodeId,
    attempt,
    input,
    now: finishedAt,
    status: 'failed',
    startedAt,
    finishedAt,
    durationMs,
    kind,
    error,
    resumeAt: resumed?.resumeAt ?? null,
    awaitingExecutionId: resumed?.awaiting ?? null,
  };
}
