import type { Clock } from '../lib/clock.js';
import { formatMicros, parseTimestampMicros } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { GraphNode } from '../graph/graph-types.js';
import type { StepSettings } from '../steps/step-runtime.js';
import type { ExecutionRow, StepRow } from './execution-store.js';
import { clearStepPayloads, insertStep, listEndedChildren, updateExecution, updateStep, wakeParent } from './execution-store.js';
import type { ExpressionScope } from './expressions.js';
import { runLoop, type LoopProgress } from './loop-runner.js';
import { runAttempt, type AttemptOutcome } from './node-runner.js';
import { nextRetryDelay } from './retry-policy.js';
import type { FrameState, WaitingNode } from './restore-state.js';
import { serializeStepError, StepError, type SerializedStepError } from './step-errors.js';
import { json, stepRow, type StepRecord } from './step-rows.js';
import type { WriteBatcher } from './write-batcher.js';

/** A call_workflow step asks the engine for a child execution. */
export interface ChildRequest {
  childId: string;
  parent: ExecutionRow;
  /** The parent's step row that starts the child (the child's `triggered_by_step_id`). */
  stepId: string;
  workflowId: string;
  input: unknown;
}

/** How an awaited child execution ended; `missing` when it was never committed (a crash in between). */
export interface ChildResult {
  status: 'completed' | 'failed' | 'cancelled' | 'missing';
  output: unknown;
  error: unknown;
}

export interface RunDeps {
  clock: Clock;
  batcher: WriteBatcher;
  settings: StepSettings;
  /** Commits a child execution (and starts it when there is capacity); throws a StepError when the call cannot be made. */
  startChild(request: ChildRequest): Promise<void>;
}

export interface RunControl {
  signal: AbortSignal;
  cancelled: () => boolean;
  /** Awaited children that have ended (read when the run was loaded), by execution id. */
  children: Map<string, ChildResult>;
}

/** How a run ended: the execution finished, or it waits until `runAt` (null: for a child execution). */
export type RunEnd = { status: 'completed' | 'failed' | 'cancelled' } | { status: 'waiting'; runAt: string | null };

/** How a frame (the run, or one loop iteration) ended. */
export type FrameEnd =
  | { status: 'settled' | 'cancelled' }
  | { status: 'waiting'; runAt: string | null }
  | { status: 'failed'; nodeId: string; error: SerializedStepError };

/**
 * An attempt's outcome as the frame handles it. `startedAt`: the attempt began earlier (a call
 * resumed); `rowId`: the id its new row must have; `replaces`: the waiting row it replaces.
 */
export type Outcome =
  | (AttemptOutcome & { startedAt?: string; rowId?: string; replaces?: string })
  | { type: 'loop_waiting'; runAt: string | null }
  | { type: 'cancelled' };

type Write = { insert: StepRow } | { update: string; row: StepRow };

/**
 * Runs one execution from its current state until it finishes or has to wait. Each step's
 * result is made durable (group commit) before the steps after it start, so a crash re-runs at
 * most the step that was in flight. The last step's row and the execution's final state are
 * written in the same commit.
 */
export class ExecutionRun {
  private readonly trigger: unknown;
  private readonly savePayloads: boolean;
  private stepCount: number;
  /** Row writes waiting for the next commit: new rows, or updates of a waiting row resumed. */
  private pending: Write[] = [];
  private executionChanges: Partial<ExecutionRow> = {};
  /** Loops under way (their iterations), by loop node id; loops do not nest. */
  readonly loops = new Map<string, LoopProgress>();

  constructor(
    readonly deps: RunDeps,
    private readonly execution: ExecutionRow,
    private readonly control: RunControl,
    stepCount: number,
    savePayloads: boolean,
  ) {
    this.trigger = execution.inputs === null ? null : JSON.parse(execution.inputs);
    this.stepCount = stepCount;
    this.savePayloads = savePayloads;
  }

  async advance(root: FrameState): Promise<RunEnd> {
    const end = await this.runFrame(root);
    const now = this.deps.clock.now();
    switch (end.status) {
      case 'cancelled':
        return { status: 'cancelled' };
      case 'waiting':
        await this.persist({ status: 'waiting', run_at: end.runAt, updated_at: now }, awaitedChildren(root, this.loops));
        return { status: 'waiting', runAt: end.runAt };
      case 'failed':
        await this.persist({ status: 'failed', error: JSON.stringify({ ...end.error, node_id: end.nodeId }), finished_at: now, updated_at: now, run_at: null });
        return { status: 'failed' };
      case 'settled':
        await this.persist({ status: 'completed', output: json(root.flow.terminalOutput()), finished_at: now, updated_at: now, run_at: null });
        return { status: 'completed' };
    }
  }

  /** Runs a frame's ready and due nodes one at a time, in graph order, until none is left. */
  async runFrame(frame: FrameState): Promise<FrameEnd> {
    const { clock } = this.deps;
    const { flow } = frame;
    while (true) {
      if (this.control.cancelled()) return { status: 'cancelled' };
      const now = clock.now();
      for (const nodeId of flow.drainSkipped()) this.record(this.row(frame, { nodeId, status: 'skipped', attempt: 1, startedAt: null, finishedAt: null, durationMs: null, kind: frame.plan.nodes.get(nodeId)!.type, now }));
      // Waiting nodes that are due run now, ahead of newly ready ones.
      const nodeId = this.nextDue(frame, now)?.nodeId ?? flow.takeReady();
      if (nodeId === undefined) {
        if (frame.waiting.size > 0) return { status: 'waiting', runAt: this.earliest(frame) };
        if (flow.isSettled()) return { status: 'settled' };
        return { status: 'failed', nodeId: '', error: { name: 'Error', code: 'stalled', message: 'no node can run and the graph is not finished', retryable: false, retry_after_ms: null } };
      }

      // The previous step's result becomes durable before the next step starts (a crash then
      // re-runs only the step in flight); the last step's row waits for the final state instead.
      if (this.pending.length > 0 || Object.keys(this.executionChanges).length > 0) await this.persist();
      const node = frame.plan.nodes.get(nodeId)!;
      const resumed = frame.waiting.get(nodeId);
      frame.waiting.delete(nodeId);
      const attempt = resumed?.attempt ?? (frame.attempts.get(nodeId) ?? 0) + 1;
      frame.attempts.set(nodeId, attempt);
      flow.markRunning(nodeId);
      const input = flow.inputOf(nodeId, this.trigger);
      const startedMs = clock.nowMs();
      const startedAt = clock.now();

      if (node.disabled) {
        // A disabled node passes its input through, recorded as skipped.
        const ports = [node.type === 'loop' ? 'done' : 'out'];
        flow.resolve(nodeId, 'completed', input, ports);
        this.record(this.row(frame, { nodeId, status: 'skipped', attempt, startedAt, finishedAt: startedAt, durationMs: 0, kind: node.type, input, output: input, ports, now: startedAt }));
        continue;
      }

      let outcome = await this.attempt(frame, node, attempt, input, resumed);
      if (outcome.type === 'cancelled' || this.control.cancelled()) return { status: 'cancelled' };
      if (outcome.type === 'call') outcome = await this.call(frame, node, attempt, input, outcome, resumed, startedAt);
      if (this.control.cancelled()) return { status: 'cancelled' };
      const finishedAt = clock.now();
      const durationMs = Math.max(0, clock.nowMs() - startedMs);
      const base = { nodeId, attempt, input, now: finishedAt };

      switch (outcome.type) {
        case 'completed': {
          const began = outcome.startedAt ?? resumed?.startedAt ?? startedAt;
          const took = began === startedAt ? durationMs : Math.max(0, Math.round(elapsedMs(began, finishedAt)));
          flow.resolve(nodeId, 'completed', outcome.output, outcome.ports);
          this.record(
            this.row(frame, { ...base, ...(outcome.rowId ? { id: outcome.rowId } : {}), status: 'completed', startedAt: began, finishedAt, durationMs: took, kind: outcome.kind, provider: outcome.provider ?? null, output: outcome.output, logs: outcome.logs ?? null, ports: outcome.ports, memoryBytes: outcome.memoryBytes ?? null, reductions: outcome.reductions ?? null, resumeAt: resumed?.resumeAt ?? null, awaitingExecutionId: resumed?.awaiting ?? null }),
            resumed?.stepId ?? undefined,
          );
          // What a respond step answered goes on the execution, in the same commit.
          if (node.type === 'respond_to_webhook') this.executionChanges.response = json(outcome.output);
          continue;
        }
        case 'wait': {
          const resumeAt = formatMicros(outcome.resumeAtMs * 1000);
          const row = this.row(frame, { ...base, status: 'waiting', startedAt, finishedAt: null, durationMs: null, kind: 'wait', resumeAt, now: startedAt });
          this.park(frame, { nodeId, stepId: row.id, attempt, resumeAt, awaiting: null, startedAt: null, loop: false });
          this.record(row);
          continue;
        }
        case 'call':
          // `call()` answers with the step waiting for its child: the waiting row is recorded.
          continue;
        case 'loop_waiting':
          this.park(frame, { nodeId, stepId: null, attempt, resumeAt: outcome.runAt, awaiting: null, startedAt: null, loop: true });
          continue;
        case 'failed': {
          const failed: Omit<StepRecord, 'executionId' | 'workspaceId'> = { ...base, status: 'failed', startedAt: outcome.startedAt ?? resumed?.startedAt ?? startedAt, finishedAt, durationMs, kind: outcome.kind, error: outcome.error, resumeAt: resumed?.resumeAt ?? null, awaitingExecutionId: resumed?.awaiting ?? null };
          const stepId = outcome.replaces ?? resumed?.stepId ?? undefined;
          if (outcome.retryInMs !== null) {
            this.record(this.row(frame, failed), stepId);
            if (outcome.retryInMs === 0) {
              // Ready again at once: its inputs are still resolved, and the attempt count goes on.
              flow.requeue(nodeId);
              continue;
            }
            const resumeAt = formatMicros((clock.nowMs() + outcome.retryInMs) * 1000);
            const next = this.row(frame, { nodeId, status: 'waiting', attempt: attempt + 1, startedAt: null, finishedAt: null, durationMs: null, kind: outcome.kind, resumeAt, now: finishedAt });
            this.record(next);
            this.park(frame, { nodeId, stepId: next.id, attempt: attempt + 1, resumeAt, awaiting: null, startedAt: null, loop: false });
            continue;
          }
          if (node.on_error === 'continue') {
            const output = { error: outcome.error };
            flow.resolve(nodeId, 'failed', output, ['error']);
            this.record(this.row(frame, { ...failed, output, ports: ['error'] }), stepId);
            continue;
          }
          this.record(this.row(frame, failed), stepId);
          return { status: 'failed', nodeId, error: outcome.error };
        }
      }
    }
  }

  /** One attempt of a node: a resumed call takes its child's result; a loop runs its iterations. */
  private async attempt(frame: FrameState, node: GraphNode, attempt: number, input: unknown, resumed: WaitingNode | undefined): Promise<Outcome> {
    if (resumed?.awaiting) {
      const child = this.control.children.get(resumed.awaiting);
      this.control.children.delete(resumed.awaiting);
      if (child && child.status !== 'missing') return childOutcome(node, attempt, resumed.awaiting, child);
      // The child was never committed (a crash between the two writes): call again, same id.
    }
    if (node.type === 'loop') return runLoop(this, frame, node, input);
    const waitResuming = resumed !== undefined && node.type === 'wait' && resumed.awaiting === null;
    return runAttempt({
      node,
      attempt,
      input,
      scope: this.scope(frame, input),
      signal: this.control.signal,
      clock: this.deps.clock,
      settings: this.deps.settings,
      execution: { id: this.execution.id, workflowId: this.execution.workflow_id, workspaceId: this.execution.workspace_id },
      resuming: waitResuming,
    });
  }

  /**
   * Starts the child of a call_workflow step. Awaited: the step's waiting row (naming the child)
   * and the child's creation are queued for the same commit, and the step waits; if they land
   * apart and the process dies, the run finds the child missing and calls again with the same
   * id. Fire-and-forget: the child is committed first and the step completes with its id (a
   * crash in between re-runs the step, as for any step in flight).
   */
  private async call(frame: FrameState, node: GraphNode, attempt: number, input: unknown, outcome: Extract<AttemptOutcome, { type: 'call' }>, resumed: WaitingNode | undefined, startedAt: string): Promise<Outcome> {
    const request = { parent: this.execution, workflowId: outcome.workflowId, input: outcome.input };
    const failure = (error: unknown): Outcome => {
      const serialized = serializeStepError(error);
      return { type: 'failed', error: serialized, retryInMs: nextRetryDelay(node.retry, attempt, serialized), kind: 'call_workflow' };
    };
    if (!outcome.wait) {
      const childId = newId();
      const stepId = newId();
      try {
        await this.deps.startChild({ ...request, childId, stepId });
      } catch (error) {
        return failure(error);
      }
      return { type: 'completed', output: { execution_id: childId }, ports: ['out'], kind: 'call_workflow', rowId: stepId };
    }
    const childId = resumed?.awaiting ?? newId();
    const row = this.row(frame, { nodeId: node.id, status: 'waiting', attempt, startedAt, finishedAt: null, durationMs: null, kind: 'call_workflow', input, awaitingExecutionId: childId, now: startedAt });
    const stepId = resumed?.stepId ?? row.id;
    this.record(row, resumed?.stepId ?? undefined);
    const [written, started] = await Promise.allSettled([this.persist(), this.deps.startChild({ ...request, childId, stepId })]);
    if (written.status === 'rejected') throw written.reason;
    if (started.status === 'rejected') {
      // The call could not be made: the waiting row becomes this attempt's failure.
      return { ...failure(started.reason), startedAt, replaces: stepId } as Outcome;
    }
    this.park(frame, { nodeId: node.id, stepId, attempt, resumeAt: null, awaiting: childId, startedAt, loop: false });
    return { type: 'call', workflowId: outcome.workflowId, input: outcome.input, wait: true };
  }

  scope(frame: FrameState, input: unknown): ExpressionScope {
    return {
      trigger: this.trigger,
      nodes: frame.flow.view,
      execution: { id: this.execution.id },
      workflow: { id: this.execution.workflow_id },
      input,
      item: frame.iteration?.item ?? null,
      index: frame.iteration?.index ?? null,
    };
  }

  /** A step row of this execution, tagged with the frame's loop iteration. */
  row(frame: FrameState, record: Omit<StepRecord, 'executionId' | 'workspaceId'>): StepRow {
    return stepRow({
      ...record,
      executionId: this.execution.id,
      workspaceId: this.execution.workspace_id,
      loopNodeId: frame.iteration?.nodeId ?? null,
      iterIndex: frame.iteration?.index ?? null,
      savePayloads: this.savePayloads,
    });
  }

  /** Queues a step row: it replaces the waiting row of a resumed attempt, else it is new. */
  record(row: StepRow, resumedStepId?: string): void {
    this.pending.push(resumedStepId ? { update: resumedStepId, row: { ...row, id: resumedStepId } } : { insert: row });
  }

  private park(frame: FrameState, waiting: WaitingNode): void {
    frame.waiting.set(waiting.nodeId, waiting);
    frame.flow.markWaiting(waiting.nodeId);
  }

  private nextDue(frame: FrameState, now: string): WaitingNode | undefined {
    for (const waiting of frame.waiting.values()) if (this.isDue(waiting, now)) return waiting;
    return undefined;
  }

  private isDue(waiting: WaitingNode, now: string): boolean {
    const current = waiting.loop ? this.loops.get(waiting.nodeId)?.current : undefined;
    if (current) return this.nextDue(current, now) !== undefined;
    if (waiting.awaiting !== null) return this.control.children.has(waiting.awaiting);
    return waiting.resumeAt !== null && waiting.resumeAt <= now;
  }

  /** When the frame is next due by time (null: it only waits for child executions). */
  private earliest(frame: FrameState): string | null {
    let best: string | null = null;
    for (const waiting of frame.waiting.values()) {
      const current = waiting.loop ? this.loops.get(waiting.nodeId)?.current : undefined;
      const at = current ? this.earliest(current) : waiting.resumeAt;
      if (at !== null && (best === null || at < best)) best = at;
    }
    return best;
  }

  /**
   * Writes the queued rows (and maybe the execution's new state) in the next group commit. A
   * run that ends also clears kept outputs (payload saving off) and wakes a waiting parent; a
   * run that waits for children is due at once if one of them ended meanwhile.
   */
  persist(final?: Partial<ExecutionRow>, awaited: string[] = []): Promise<void> {
    const writes = this.pending;
    const changes = { ...this.executionChanges, ...(final ?? {}) };
    this.pending = [];
    this.executionChanges = {};
    this.stepCount += writes.filter((w) => 'insert' in w).length;
    const stepCount = this.stepCount;
    const { execution } = this;
    const ends = changes.status === 'completed' || changes.status === 'failed';
    return this.deps.batcher.write(async (trx) => {
      for (const write of writes) {
        if ('insert' in write) {
          await insertStep(trx, write.insert);
        } else {
          const { id: _id, inserted_at: _inserted, ...fields } = write.row;
          await updateStep(trx, write.update, fields);
        }
      }
      if (changes.status === 'waiting' && changes.run_at === null && (await listEndedChildren(trx, awaited)).length > 0) changes.run_at = changes.updated_at!;
      if (Object.keys(changes).length > 0) await updateExecution(trx, execution.id, { ...changes, step_count: stepCount }, ['running']);
      if (ends && !this.savePayloads) await clearStepPayloads(trx, execution.id);
      if (ends && execution.parent_execution_id !== null) await wakeParent(trx, execution.parent_execution_id, execution.id, changes.updated_at!);
    });
  }
}

/** Milliseconds between two canonical timestamps, to the microsecond. */
function elapsedMs(from: string, to: string): number {
  return ((parseTimestampMicros(to) ?? 0) - (parseTimestampMicros(from) ?? 0)) / 1000;
}

/** The outcome of a call step whose child ended. A failed or cancelled child fails the step (retryable). */
function childOutcome(node: GraphNode, attempt: number, childId: string, child: ChildResult): Outcome {
  if (child.status === 'completed') return { type: 'completed', output: child.output, ports: ['out'], kind: 'call_workflow' };
  const cause = child.error as { message?: unknown } | null;
  const message = child.status === 'cancelled' ? 'was cancelled' : `failed: ${typeof cause?.message === 'string' ? cause.message : 'unknown error'}`;
  const error = serializeStepError(new StepError(`the called workflow's execution ${childId} ${message}`, { code: child.status === 'cancelled' ? 'child_cancelled' : 'child_failed', details: { execution_id: childId, error: child.error } }));
  return { type: 'failed', error, retryInMs: nextRetryDelay(node.retry, attempt, error), kind: 'call_workflow' };
}

/** Ids of the child executions this run's waiting call steps await (its loops' current iterations included). */
function awaitedChildren(frame: FrameState, loops: Map<string, LoopProgress>): string[] {
  const ids: string[] = [];
  for (const waiting of frame.waiting.values()) {
    if (waiting.awaiting !== null) ids.push(waiting.awaiting);
    const current = waiting.loop ? loops.get(waiting.nodeId)?.current : undefined;
    if (current) ids.push(...awaitedChildren(current, loops));
  }
  return ids;
}
