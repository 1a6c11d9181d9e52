import type { Kysely } from 'kysely';
import type { Database, ExecutionStatus } from '../db/schema.js';
import type { Graph } from '../graph/graph-types.js';
import { parseTimestampMicros, type Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { FreshCache } from '../lib/fresh-cache.js';
import type { StepSettings } from '../steps/step-runtime.js';
import { findStepDefinition } from '../steps/registry.js';
import { ExecutionRun, type ChildRequest, type ChildResult } from './execution-run.js';
import {
  existingExecutions,
  findExecution,
  insertExecution,
  listAwaitedChildren,
  listDue,
  listEndedChildren,
  listResumable,
  listSteps,
  nextDueAt,
  updateExecution,
  wakeParent,
  type ExecutionRow,
  type StepRow,
} from './execution-store.js';
import { planGraph, type GraphPlan } from './graph-plan.js';
import { restoreFrame } from './restore-state.js';
import { RunSlots } from './run-slots.js';
import { NonRetriableError } from './step-errors.js';
import { json, stepRow } from './step-rows.js';
import { WriteBatcher } from './write-batcher.js';
import { isTerminal } from './statuses.js';

/**
 * How deep call_workflow may nest (a top-level run is depth 0). Deep enough for real call
 * trees, small enough that runaway recursion fails within milliseconds and a few dozen rows.
 */
export const MAX_CALL_DEPTH = 16;

/** What a call_workflow step runs: the snapshot of the target workflow (the caller decides which). */
export type CallTargetResolver = (request: { workspaceId: string; workflowId: string; parentSnapshotId: string }) => Promise<{ snapshotId: string; graph?: Graph }>;

export interface EngineOptions {
  db: Kysely<Database>;
  clock: Clock;
  settings: StepSettings;
  /** Executions running at once in this process; more wait `pending`, in order. */
  maxConcurrent?: number;
  /** Real timers for waits and retries; tests with a manual clock call `runDue()` instead. */
  timers?: boolean;
  /** Resolves call_workflow targets (the service layer: workspace scoping, active or draft). */
  resolveCallTarget?: CallTargetResolver;
  onError?: (error: unknown, executionId: string) => void;
}

export interface StartRun {
  workspaceId: string;
  workflowId: string;
  snapshotId: string;
  /** The snapshot's graph when the caller has it in hand (a draft run); else loaded on a cache miss. */
  graph?: Graph;
  userId: string | null;
  /** The trigger payload `{method, headers, query, body}`. */
  trigger: unknown;
  /** Root nodes that fire (default: every root); the others are recorded skipped. */
  firedRoots?: string[];
}

interface InFlight {
  workflowId: string;
  controller: AbortController;
  cancelled: boolean;
  /** A child it awaits ended while this run was still finishing: look at it again afterwards. */
  wakeAgain: boolean;
  done: Promise<void>;
}

type Identity = Omit<ExecutionRow, 'status' | 'started_at' | 'finished_at' | 'inserted_at' | 'updated_at' | 'output' | 'error' | 'step_count' | 'run_at' | 'lease_owner' | 'lease_expires_at' | 'response'>;

/**
 * The in-process engine. The executions table is the queue: an execution is created (with its
 * trigger step) in one commit before anyone is told its id, then run here directly, with no
 * polling on the hot path. Waits, retries and call_workflow steps leave the execution `waiting`
 * (`run_at` when due by time); a timer, `runDue()`, or the end of an awaited child picks it up
 * again, also after a restart (`start()` resumes executions left running or due).
 * See ARCHITECTURE.md.
 */
export class Engine {
  readonly batcher: WriteBatcher;
  private readonly plans = new FreshCache<GraphPlan>(500);
  private readonly inFlight = new Map<string, InFlight>();
  private readonly slots: RunSlots;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /**
   * Whether `pending` executions may be queued in the database. A freed slot looks for them only
   * then: querying after every finished execution would cost a read per run at full throughput.
   */
  private mayHavePending = true;
  /** Bumped whenever an execution is queued pending, so a look-up racing with it does not clear the flag. */
  private pendingEpoch = 0;
  /** Due passes under way (a freed slot starts one), so `idle()` can wait for what they start. */
  private readonly duePasses = new Set<Promise<void>>();
  /** Resumptions of parents whose child ended, so `idle()` waits for them too. */
  private readonly wakes = new Set<Promise<void>>();

  constructor(private readonly options: EngineOptions) {
    this.batcher = new WriteBatcher(options.db);
    this.slots = new RunSlots(options.maxConcurrent ?? 64);
  }

  /** Resumes executions a previous process left running, and those already due. */
  async start(): Promise<void> {
    this.stopped = false;
    const rows = await listResumable(this.options.db, this.options.clock.now(), 10_000);
    for (const row of rows) {
      const plan = await this.loadPlan(row.workflow_snapshot_id);
      // Recovery is not held back by the limits: these runs held their slots when the process stopped.
      this.slots.take(row.workflow_id, plan.settings.concurrencyLimit);
      this.dispatch(row, plan);
    }
    await this.scheduleTimer();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const run of this.inFlight.values()) run.controller.abort();
    await Promise.allSettled([...this.inFlight.values()].map((run) => run.done));
    await this.batcher.drain();
  }

  /** Creates an execution (committed before returning) and starts it when capacity allows. */
  async run(start: StartRun): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const plan = await this.loadPlan(start.snapshotId, start.graph);
    const id = newId();
    const identity: Identity = {
      id,
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
    };
    return this.admit(identity, plan, this.rootRows(plan, identity, start.trigger, start.firedRoots));
  }

  /**
   * Retries a failed execution as a new one, linked by `retry_of_execution_id`: same snapshot
   * and trigger payload, the completed and skipped steps copied over (outputs kept, so they do
   * not run again), and the run continues from the step that failed. Without saved payloads
   * (`save_step_payloads: false`) there are no outputs to keep: the retry runs from the trigger.
   */
  async retry(failed: ExecutionRow, userId: string | null): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const plan = await this.loadPlan(failed.workflow_snapshot_id);
    const id = newId();
    const rows = await listSteps(this.options.db, failed.id);
    const { id: _old, status: _status, ...same } = failed;
    let steps: StepRow[];
    if (plan.settings.savePayloads) {
      const kept = rows.filter((row) => row.status === 'completed' || row.status === 'skipped' || (row.status === 'failed' && row.ports !== null));
      steps = kept.map((row) => ({ ...row, id: newId(), workflow_execution_id: id }));
    } else {
      const fired = rows.filter((row) => row.loop_node_id === null && plan.roots.includes(row.node_id) && row.status !== 'skipped').map((row) => row.node_id);
      steps = this.rootRows(plan, { id, workspace_id: failed.workspace_id }, failed.inputs === null ? null : JSON.parse(failed.inputs), fired);
    }
    return this.admit({ ...same, id, retry_of_execution_id: failed.id, user_id: userId }, plan, steps);
  }

  /**
   * Commits a child execution for a call_workflow step and starts it when there is capacity.
   * Its trigger payload is `{method: "CALL", headers: {}, query: {}, body: input}`.
   */
  async startChild(request: ChildRequest): Promise<void> {
    const depth = request.parent.call_depth + 1;
    if (depth > MAX_CALL_DEPTH) {
      throw new NonRetriableError(`call_workflow nests deeper than ${MAX_CALL_DEPTH} levels (runaway recursion?); execution ${request.parent.id} is at depth ${request.parent.call_depth}`, { code: 'call_depth_exceeded' });
    }
    if (!this.options.resolveCallTarget) throw new NonRetriableError('call_workflow is not available in this engine', { code: 'not_available' });
    const target = await this.options.resolveCallTarget({ workspaceId: request.parent.workspace_id, workflowId: request.workflowId, parentSnapshotId: request.parent.workflow_snapshot_id });
    const plan = await this.loadPlan(target.snapshotId, target.graph);
    const trigger = { method: 'CALL', headers: {}, query: {}, body: request.input };
    const identity: Identity = {
      id: request.childId,
      workspace_id: request.parent.workspace_id,
      workflow_id: request.workflowId,
      workflow_snapshot_id: target.snapshotId,
      triggered_by_step_id: request.stepId,
      parent_execution_id: request.parent.id,
      call_depth: depth,
      retry_of_execution_id: null,
      user_id: request.parent.user_id,
      context: null,
      inputs: json(trigger),
    };
    await this.admit(identity, plan, this.rootRows(plan, identity, trigger));
  }

  /** The first rows of a run: fired triggers complete with the payload, unfired roots are skipped. */
  private rootRows(plan: GraphPlan, identity: Pick<Identity, 'id' | 'workspace_id'>, trigger: unknown, firedRoots?: string[]): StepRow[] {
    const now = this.options.clock.now();
    const fired = new Set(firedRoots ?? plan.roots);
    const base = { executionId: identity.id, workspaceId: identity.workspace_id, now, savePayloads: plan.settings.savePayloads };
    return plan.roots.flatMap((nodeId) => {
      const node = plan.nodes.get(nodeId)!;
      if (!fired.has(nodeId)) return [stepRow({ ...base, nodeId, status: 'skipped', attempt: 1, startedAt: null, finishedAt: null, durationMs: null, kind: node.type })];
      // A trigger's output is the trigger payload; other roots run with it as their input.
      if (findStepDefinition(node.type)?.trigger) {
        return [stepRow({ ...base, nodeId, status: 'completed', attempt: 1, startedAt: now, finishedAt: now, durationMs: 0, kind: node.type, output: trigger, ports: ['out'] })];
      }
      return [];
    });
  }

  /**
   * Commits a new execution with its first step rows, `running` when a slot is free (engine-wide
   * and for its workflow) and starts it, else `pending` for `runDue` to pick up in order.
   */
  private async admit(identity: Identity, plan: GraphPlan, steps: StepRow[]): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const now = this.options.clock.now();
    const limit = plan.settings.concurrencyLimit;
    // The slot is taken before the commit is awaited, so concurrent admissions cannot overbook.
    const status: ExecutionStatus = this.slots.canStart(identity.workflow_id, limit) ? 'running' : 'pending';
    if (status === 'running') {
      this.slots.take(identity.workflow_id, limit);
    } else {
      this.mayHavePending = true;
      this.pendingEpoch += 1;
    }
    const row: ExecutionRow = {
      ...identity,
      status,
      started_at: status === 'running' ? now : null,
      finished_at: null,
      inserted_at: now,
      updated_at: now,
      output: null,
      error: null,
      step_count: steps.length,
      run_at: status === 'pending' ? now : null,
      lease_owner: null,
      lease_expires_at: null,
      response: null,
    };
    try {
      await this.batcher.write((trx) => insertExecution(trx, row, steps));
    } catch (error) {
      if (status === 'running') this.slots.release(identity.workflow_id);
      throw error;
    }
    if (status === 'running') this.track(row, (run) => this.advance(row, plan, steps, run));
    return { execution_id: row.id, status };
  }

  /**
   * Cancels a pending, running or waiting execution: the row moves to `cancelled` first (so no
   * step starts afterwards), then the running step is aborted, the children its call steps
   * await are cancelled too, and a parent awaiting this one is woken. Returns the new status, or
   * the terminal status it already had (the caller answers 409 then).
   */
  async cancel(execution: ExecutionRow): Promise<{ cancelled: boolean; status: ExecutionStatus }> {
    if (isTerminal(execution.status)) return { cancelled: false, status: execution.status };
    const now = this.options.clock.now();
    let moved = false;
    await this.batcher.write(async (trx) => {
      moved = await updateExecution(trx, execution.id, { status: 'cancelled', finished_at: now, updated_at: now, run_at: null }, ['pending', 'running', 'waiting']);
      if (moved && execution.parent_execution_id !== null) await wakeParent(trx, execution.parent_execution_id, execution.id, now);
    });
    const run = this.inFlight.get(execution.id);
    if (run) {
      run.cancelled = true;
      run.controller.abort();
    }
    if (!moved) {
      const current = await findExecution(this.options.db, execution.id);
      return { cancelled: false, status: current?.status ?? execution.status };
    }
    for (const child of await listAwaitedChildren(this.options.db, execution.id)) await this.cancel(child);
    if (execution.parent_execution_id !== null) this.wake(execution.parent_execution_id);
    return { cancelled: true, status: 'cancelled' };
  }

  /** Runs every due pending or waiting execution (the timer calls this; so do tests). */
  runDue(): Promise<void> {
    const pass = this.duePass().finally(() => this.duePasses.delete(pass));
    this.duePasses.add(pass);
    return pass;
  }

  private async duePass(): Promise<void> {
    const capacity = this.slots.free();
    if (capacity > 0) {
      const epoch = this.pendingEpoch;
      const blocked = this.slots.blockedWorkflows();
      const due = await listDue(this.options.db, this.options.clock.now(), capacity, blocked);
      // Fewer due rows than free slots: the queue is drained, unless something was queued
      // meanwhile or a workflow's own limit holds some back.
      if (due.length < capacity && epoch === this.pendingEpoch && blocked.length === 0) this.mayHavePending = false;
      for (const row of due) await this.tryDispatch(row);
    }
    await this.scheduleTimer();
  }

  /** Dispatches a due execution if it is not running here and a slot is free for it. */
  private async tryDispatch(row: ExecutionRow): Promise<void> {
    const plan = await this.loadPlan(row.workflow_snapshot_id);
    if (this.inFlight.has(row.id)) return;
    if (!this.slots.canStart(row.workflow_id, plan.settings.concurrencyLimit)) {
      this.mayHavePending = true;
      return;
    }
    this.slots.take(row.workflow_id, plan.settings.concurrencyLimit);
    this.dispatch(row, plan);
  }

  /** Resolves when no execution is in flight in this process (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0 || this.duePasses.size > 0 || this.wakes.size > 0) {
      await Promise.allSettled([...this.inFlight.values()].map((run) => run.done));
      await Promise.allSettled([...this.duePasses, ...this.wakes]);
    }
    await this.batcher.drain();
  }

  /**
   * The plan of a snapshot. Snapshots never change, so plans are cached by id and the graph is
   * read (and parsed) only on a miss: not on every run of an active workflow.
   */
  private async loadPlan(snapshotId: string, graph?: Graph): Promise<GraphPlan> {
    const cached = this.plans.get(snapshotId, '');
    if (cached) return cached;
    let source = graph;
    if (!source) {
      const snapshot = await this.options.db.selectFrom('workflow_snapshots').select('graph').where('id', '=', snapshotId).executeTakeFirst();
      if (!snapshot) throw new Error(`snapshot ${snapshotId} is missing`);
      source = JSON.parse(snapshot.graph) as Graph;
    }
    const plan = planGraph(source);
    this.plans.set(snapshotId, '', plan);
    return plan;
  }

  /** Loads an execution's steps (and the children it awaits), then runs it; its slot is taken. */
  private dispatch(row: ExecutionRow, plan: GraphPlan): void {
    this.track(row, async (run) => {
      const steps = await listSteps(this.options.db, row.id);
      const now = this.options.clock.now();
      const started = await updateExecution(this.options.db, row.id, { status: 'running', run_at: null, updated_at: now, started_at: row.started_at ?? now }, ['pending', 'running', 'waiting']);
      if (!started) return;
      await this.advance({ ...row, status: 'running' }, plan, steps, run);
    });
  }

  private track(row: ExecutionRow, body: (run: InFlight) => Promise<void>): void {
    const run: InFlight = { workflowId: row.workflow_id, controller: new AbortController(), cancelled: false, wakeAgain: false, done: Promise.resolve() };
    this.inFlight.set(row.id, run);
    run.done = body(run)
      .catch((error: unknown) => this.options.onError?.(error, row.id))
      .finally(() => {
        this.inFlight.delete(row.id);
        this.slots.release(row.workflow_id);
        if (run.wakeAgain) this.wake(row.id);
        // A slot is free: start the oldest pending execution, if any may be queued.
        if (!this.stopped && this.mayHavePending) void this.runDue().catch((error: unknown) => this.options.onError?.(error, row.id));
      });
  }

  private async advance(row: ExecutionRow, plan: GraphPlan, steps: StepRow[], run: InFlight): Promise<void> {
    const children = await this.endedChildren(steps);
    const execution = new ExecutionRun(
      { clock: this.options.clock, batcher: this.batcher, settings: this.options.settings, startChild: (request) => this.startChild(request) },
      row,
      { signal: run.controller.signal, cancelled: () => run.cancelled || this.stopped, children },
      steps.length,
      plan.settings.savePayloads,
    );
    const end = await execution.advance(restoreFrame(plan, steps, {}, null));
    if (end.status === 'waiting') {
      // A child may have ended while this run was committing its wait: look again once it is off the books.
      if (end.runAt === null) run.wakeAgain = true;
      await this.scheduleTimer();
    } else if (end.status !== 'cancelled' && row.parent_execution_id !== null) {
      this.wake(row.parent_execution_id);
    }
  }

  /** The awaited children among these rows that have ended (or were never committed). */
  private async endedChildren(steps: StepRow[]): Promise<Map<string, ChildResult>> {
    const awaited = steps.filter((s) => s.status === 'waiting' && s.awaiting_workflow_execution_id !== null).map((s) => s.awaiting_workflow_execution_id!);
    const children = new Map<string, ChildResult>();
    if (awaited.length === 0) return children;
    for (const child of await listEndedChildren(this.options.db, awaited)) {
      children.set(child.id, { status: child.status as ChildResult['status'], output: child.output === null ? null : JSON.parse(child.output), error: child.error === null ? null : JSON.parse(child.error) });
    }
    const existing = await existingExecutions(this.options.db, awaited);
    for (const id of awaited) if (!existing.has(id)) children.set(id, { status: 'missing', output: null, error: null });
    return children;
  }

  /**
   * A child of this execution ended: resume it now if it waits and is due (the child's final
   * commit made it due). If it is still running here, look again when its run ends.
   */
  private wake(id: string): void {
    if (this.stopped) return;
    const inFlight = this.inFlight.get(id);
    if (inFlight) {
      inFlight.wakeAgain = true;
      return;
    }
    const pass = (async () => {
      const row = await findExecution(this.options.db, id);
      if (!row || row.status !== 'waiting' || row.run_at === null || row.run_at > this.options.clock.now()) return;
      await this.tryDispatch(row);
    })()
      .catch((error: unknown) => this.options.onError?.(error, id))
      .finally(() => this.wakes.delete(pass));
    this.wakes.add(pass);
  }

  private async scheduleTimer(): Promise<void> {
    if (!this.options.timers || this.stopped) return;
    const next = await nextDueAt(this.options.db);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (next === null) return;
    const delay = Math.max(0, Math.floor((parseTimestampMicros(next) ?? 0) / 1000) - this.options.clock.nowMs());
    // Timers longer than ~24 days overflow; a shorter re-check is harmless.
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runDue().catch(() => {});
    }, Math.min(delay, 2 ** 31 - 1));
    this.timer.unref?.();
  }
}
