import { RunCancel } from '../../lib/cancellation.js';
import type { GraphNode } from '../../graph/graph-types.js';
import { findStepDefinition } from '../../steps/registry.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';
import type { ExpressionScope } from '../expressions/expression-scope.js';
import { childOutcome, startCall } from './call-runner.js';
import { runLoop } from './loop-runner.js';
import { nodeApprovals, runApproval } from './approval-runner.js';
import type { LoopProgress, RunHost } from './run-host.js';
import type { EffectWrite } from '../commit/run-commit.js';
import { runAttempt } from './node-runner.js';
import { nodeCalls, nodeJournal } from './node-journal.js';
import type { FrameState, WaitingNode } from './restore-state.js';
import type { StepEffect } from '../../steps/step-runtime.js';
import { json, stepRow, type StepOwner, type StepRecord } from '../commit/step-rows.js';
import { RunWrites, type EffectCommitted } from './run-writes.js';
import { settleOutcome } from './attempt-outcome.js';
import type { AdvanceOptions, ChildResult, FrameEnd, Outcome, RunControl, RunDeps, RunEnd } from './run-types.js';
import type { ErrorRun } from './error-run.js';
import { awaitedChildren, earliestDue, nextDue } from './run-waits.js';

function hasEffects(slug: string): boolean {
  return findStepDefinition(slug)?.effects === true;
}

/**
 * Steps with effects whose effect commits with the step's own result: `call_workflow` (the
 * child's row) and `save_to_store` (the store row). Every other step with effects (an HTTP
 * request) is recorded `running` before it starts, so a process that dies during it leaves a
 * trace: the run that takes over marks that attempt failed (`interrupted`) and runs the next.
 */
const TRANSACTIONAL_EFFECTS = new Set(['call_workflow', 'save_to_store']);

/** The control of a run not advancing (replaced by `advance`), shared by every such run. */
const IDLE_CONTROL: RunControl = { cancel: new RunCancel(), cancelled: () => true };

/** How long a queued or parked run may run before its `running` status is committed on its own. */
const OPENING_DELAY_MS = 20;

/**
 * Runs one execution from its current state until it finishes or has to wait. Each step's
 * result is made durable (group commit) before the steps after it start, so a crash re-runs at
 * most the step that was in flight. The last step's row and the execution's final state are
 * written in the same commit.
 */
export class ExecutionRun implements RunHost {
  private readonly trigger: unknown;
  /** What this run has queued for its next commit, and that commit. */
  private readonly writes: RunWrites;
  /** Loops under way (their iterations), by loop node id; loops do not nest. */
  readonly loops = new Map<string, LoopProgress>();
  /** Awaited children that have ended, by execution id (read from the database, or handed over in process). */
  readonly children = new Map<string, ChildResult>();
  /** Approval steps (by waiting row id) decided while this run was held in memory (Flights.decided). */
  readonly decided = new Set<string>();
  private control: RunControl = IDLE_CONTROL;
  /** A write found the execution ended (cancelled elsewhere): nothing more runs. */
  private ended = false;

  constructor(
    readonly deps: RunDeps,
    readonly execution: ExecutionRow,
    stepCount: number,
    savePayloads: boolean,
  ) {
    this.trigger = execution.inputs === null ? null : JSON.parse(execution.inputs);
    this.writes = new RunWrites(deps, execution, stepCount, savePayloads);
  }

  /**
   * Runs the execution from `root` until it ends or waits. `opening`: changes of the execution
   * row (a pending or waiting execution becoming `running`). Loaded from the database, they are
   * committed before any step runs, and if that commit finds the execution ended (cancelled
   * meanwhile), nothing runs. Held in this process (`lazy`: a queued or parked run, which a
   * cancel removes before it can start), they are committed with the run's next commit (or
   * after a short delay) instead of before its first step, saving a commit's wait on the way
   * in: the call_workflow benchmark's parent resumes this way.
   */
  async advance(
    root: FrameState,
    control: RunControl,
    { opening = {}, lazy = false, deferWait = false }: AdvanceOptions = {},
  ): Promise<RunEnd> {
    this.control = control;
    this.ended = false;
    if (lazy) {
      // Not before the first step (it would wait a commit): with the run's next commit, or after
      // OPENING_DELAY_MS if none came by then (a long pure step), so the status never lags far.
      // Short runs, most of them, pay nothing. A commit that finds the execution ended
      // (cancelled by another process) stops the run.
      this.writes.open(opening);
      if (Object.keys(opening).length > 0) {
        const timer = setTimeout(() => {
          if (!this.writes.opened) return;
          this.persist().then(
            (current) => {
              if (!current) this.ended = true;
            },
            () => {
              // The next write fails the same way and ends the run.
            },
          );
        }, OPENING_DELAY_MS);
        timer.unref?.();
      }
    } else {
      this.writes.change(opening);
      if (Object.keys(opening).length > 0 && !(await this.persist())) return { status: 'cancelled' };
    }
    const end = await this.runFrame(root);
    const now = this.deps.clock.now();
    switch (end.status) {
      case 'cancelled':
        return { status: 'cancelled' };
      case 'waiting':
        if (end.runAt === null && deferWait) {
          // Only children are awaited, and they often end within a millisecond: the status can
          // wait (the rows cannot). A crash meanwhile leaves it `running`, which recovery resumes.
          if (this.writes.hasRows && !(await this.persist())) return { status: 'cancelled' };
          return { status: 'waiting', runAt: null, deferred: true };
        }
        await this.commitWait(root, end.runAt);
        return { status: 'waiting', runAt: end.runAt };
      case 'failed': {
        const error = Object.assign({}, end.error, { node_id: end.nodeId });
        const final: Partial<ExecutionRow> = {
          status: 'failed',
          error: JSON.stringify(error),
          finished_at: now,
          updated_at: now,
          run_at: null,
        };
        // Its workflow's error workflow starts in the same commit (error-run.ts); one look-up, on failure only.
        const startedAt = this.execution.started_at ?? opening.started_at ?? null;
        const report = await this.deps.errorRun?.(this.execution, { error, nodeId: end.nodeId || null, startedAt, finishedAt: now });
        if (report) Object.assign(final, report.record);
        return this.finish(final, { status: 'failed', error }, report ?? undefined);
      }
      case 'settled': {
        const output = root.flow.terminalOutput();
        return this.finish(
          { status: 'completed', output: json(output), finished_at: now, updated_at: now, run_at: null },
          { status: 'completed', output },
        );
      }
    }
  }

  /** Writes the `waiting` status (with `run_at`, null when only children are awaited). */
  async commitWait(root: FrameState, runAt: string | null = null): Promise<void> {
    await this.persist({ status: 'waiting', run_at: runAt, updated_at: this.deps.clock.now() }, awaitedChildren(this, root));
  }

  private async finish(final: Partial<ExecutionRow>, end: RunEnd, errorRun?: ErrorRun): Promise<RunEnd> {
    const written = this.writes.persist(final, [], undefined, errorRun);
    if (this.deps.coordination) {
      // In a cluster the end is handed to a parent in this process only once it is durable: the
      // commit may still find this run's lease taken by another worker (LeaseLostError), and a
      // parent that went on with an end that never landed would complete its call step with a
      // result the child's new owner then produces again, running its effects twice. The parent
      // is still checked against its own lease by its next commit.
      if (!(await written)) return { status: 'cancelled' };
      this.control.ending?.(end);
      return end;
    }
    this.control.ending?.(end);
    return (await written) ? end : { status: 'cancelled' };
  }

  /**
   * Commits a respond step's answer now, without waiting, when another node is about to run
   * (the run goes on while its caller is answered). When the respond step was the run's last
   * node, nothing is written here: the run's final commit, which follows at once, carries the
   * answer with the step rows and the end state, so the execution row is updated once instead
   * of twice (the two writes already shared a group commit). Every way out of `runFrame` other
   * than the ones that call this writes the run's state (finish, commitWait, the waiting and
   * loop paths).
   */
  private sendResponse(): void {
    if (!this.writes.responseUnsent) return;
    // persist() clears the flag: any commit of the run carries the answer.
    this.persist().catch(() => {
      // The next write fails the same way and ends the run; the caller times out.
    });
  }

  /** Whether a waiting node of this run is due now (a child handed over, a timer passed). */
  hasDue(root: FrameState): boolean {
    return nextDue(this, root, this.deps.clock.now()) !== undefined;
  }

  /** Runs a frame's ready and due nodes one at a time, in graph order, until none is left. */
  async runFrame(frame: FrameState): Promise<FrameEnd> {
    const { clock } = this.deps;
    const { flow } = frame;
    if (frame.interrupted.length > 0) this.writes.interrupted(frame.interrupted.splice(0), this.deps.clock.now());
    while (true) {
      if (this.control.cancelled() || this.ended) {
        this.sendResponse();
        return { status: 'cancelled' };
      }
      const now = clock.now();
      for (const nodeId of flow.drainSkipped())
        this.record(
          this.row(frame, {
            nodeId,
            status: 'skipped',
            attempt: 1,
            startedAt: null,
            finishedAt: null,
            durationMs: null,
            kind: frame.plan.nodes.get(nodeId)!.type,
            now,
          }),
        );
      // Waiting nodes that are due run now, ahead of newly ready ones.
      const nodeId = nextDue(this, frame, now)?.nodeId ?? flow.takeReady();
      if (nodeId === undefined) {
        if (frame.waiting.size > 0) return { status: 'waiting', runAt: earliestDue(this, frame) };
        // Every way out from here writes the run's state, the respond step's answer with it.
        if (flow.isSettled()) return { status: 'settled' };
        return {
          status: 'failed',
          nodeId: '',
          error: {
            name: 'Error',
            code: 'stalled',
            message: 'no node can run and the graph is not finished',
            retryable: false,
            retry_after_ms: null,
          },
        };
      }

      // Another node runs: the caller of a respond step that ran before it is answered now.
      this.sendResponse();
      const node = frame.plan.nodes.get(nodeId)!;
      const resumed = frame.waiting.get(nodeId);
      frame.waiting.delete(nodeId);
      // A decision's mark is used up (a node that waits again, an agent's next approval, is not due).
      if (resumed?.stepId) this.decided.delete(resumed.stepId);
      const attempt = resumed?.attempt ?? (frame.attempts.get(nodeId) ?? 0) + 1;
      frame.attempts.set(nodeId, attempt);
      flow.markRunning(nodeId);
      const input = flow.inputOf(nodeId, this.trigger);
      // Results are committed before a step with effects starts (a request, a child execution):
      // a crash then re-runs only the step in flight. Pure steps (set, if, switch, code, …) run
      // on without a commit of their own: after a crash they run again, which nobody can tell.
      // A webhook -> code -> respond run thus commits twice instead of four times.
      let runningRowId: string | undefined;
      if (hasEffects(node.type) && !node.disabled) {
        if (!TRANSACTIONAL_EFFECTS.has(node.type)) {
          const now = clock.now();
          const running = this.row(frame, {
            nodeId,
            attempt,
            input,
            status: 'running',
            startedAt: now,
            finishedAt: null,
            durationMs: null,
            kind: node.type,
            resumeAt: resumed?.resumeAt ?? null,
            now,
          });
          this.record(running, resumed?.stepId ?? undefined);
          runningRowId = running.id;
        }
        if (this.writes.queued && !(await this.persist())) return { status: 'cancelled' };
      }
      const startedMs = clock.nowMs();
      const startedAt = clock.now();

      if (node.disabled) {
        // A disabled node passes its input through, recorded as skipped.
        const ports = [node.type === 'loop' ? 'done' : 'out'];
        flow.resolve(nodeId, 'completed', input, ports);
        this.record(
          this.row(frame, {
            nodeId,
            status: 'skipped',
            attempt,
            startedAt,
            finishedAt: startedAt,
            durationMs: 0,
            kind: node.type,
            input,
            output: input,
            ports,
            now: startedAt,
          }),
        );
        continue;
      }

      let outcome = await this.attempt(frame, node, attempt, input, resumed);
      if (outcome.type === 'cancelled' || this.control.cancelled()) return { status: 'cancelled' };
      if (outcome.type === 'call') outcome = await startCall(this, frame, node, attempt, input, outcome, resumed, startedAt);
      if (this.control.cancelled()) return { status: 'cancelled' };
      const finishedAt = clock.now();
      const durationMs = Math.max(0, clock.nowMs() - startedMs);

      const end = await settleOutcome(this, frame, node, outcome, {
        attempt,
        input,
        resumed,
        startedAt,
        finishedAt,
        durationMs,
        replaces: runningRowId ?? resumed?.stepId ?? undefined,
      });
      if (end) return end;
    }
  }

  /** Commits a step's effect with its completed row at once (RunWrites.commitEffect). */
  commitEffect(effect: StepEffect, row: StepRow, replaces: string | undefined): Promise<EffectCommitted> {
    return this.writes.commitEffect(effect, row, replaces);
  }

  /** One attempt of a node: a resumed call takes its child's result; a loop runs its iterations. */
  private async attempt(
    frame: FrameState,
    node: GraphNode,
    attempt: number,
    input: unknown,
    resumed: WaitingNode | undefined,
  ): Promise<Outcome> {
    if (resumed?.awaiting) {
      const child = this.children.get(resumed.awaiting);
      this.children.delete(resumed.awaiting);
      if (child && child.status !== 'missing') return childOutcome(node, attempt, resumed.awaiting, child);
      // The child was never committed (a crash between the two writes): call again, same id.
    }
    if (node.type === 'loop') return runLoop(this, frame, node, input);
    if (node.type === 'approval') return runApproval(this, frame, node, input, resumed);
    const waitResuming = resumed !== undefined && node.type === 'wait' && resumed.awaiting === null;
    return runAttempt({
      node,
      attempt,
      input,
      scope: this.scope(frame, input),
      cancel: this.control.cancel,
      clock: this.deps.clock,
      settings: this.deps.settings,
      stores: this.deps.stores,
      execution: { id: this.execution.id, workflowId: this.execution.workflow_id, workspaceId: this.execution.workspace_id },
      resuming: waitResuming,
      journal: node.type === 'agent' ? nodeJournal(this, frame, node.id, attempt) : undefined,
      calls: node.type === 'agent' ? nodeCalls(this, () => this.control.cancelled()) : undefined,
      approvals: node.type === 'agent' ? nodeApprovals(this, node.id) : undefined,
      agent: this.deps.agent,
    });
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
  row(frame: FrameState, record: StepRecord): StepRow {
    const owner: StepOwner = {
      executionId: this.execution.id,
      workspaceId: this.execution.workspace_id,
      loopNodeId: frame.iteration?.nodeId ?? null,
      iterIndex: frame.iteration?.index ?? null,
      savePayloads: this.writes.savePayloads,
    };
    return stepRow(owner, record);
  }

  respond(response: string | null): void {
    this.writes.respond(response);
  }

  /** Queues a step row (run-writes.ts): it replaces the waiting row of a resumed attempt, else it is new. */
  record(row: StepRow, resumedStepId?: string, final = true): void {
    this.writes.record(row, resumedStepId, final);
  }

  park(frame: FrameState, waiting: WaitingNode): void {
    frame.waiting.set(waiting.nodeId, waiting);
    frame.flow.markWaiting(waiting.nodeId);
  }

  /** Writes the queued rows (and maybe the execution's new state) in the next group commit (run-writes.ts). */
  persist(final?: Partial<ExecutionRow>, awaited: string[] = [], effect?: EffectWrite): Promise<boolean> {
    return this.writes.persist(final, awaited, effect);
  }
}
