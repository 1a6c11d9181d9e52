import type { Transaction } from 'kysely';
import type { Database, ExecutionStatus } from '../db/schema.js';
import { parseTimestampMicros } from '../lib/clock.js';
import type { ChildRequest } from './run/run-types.js';
import { childIdentity, newExecutionRow, retryStart, rootRows, runIdentity, type ExecutionIdentity } from './run/execution-start.js';
import {
  failRunningSteps,
  findExecution,
  insertExecution,
  listAwaitedChildren,
  listDue,
  listResumable,
  listSteps,
  nextDueAt,
  updateExecution,
  wakeParent,
  type ExecutionRow,
  type StepRow,
} from './execution-store.js';
import type { GraphPlan } from './run/graph-plan.js';
import { StartQueue, type QueuedStart } from './flights/run-queue.js';
import { NonRetriableError } from './step-errors.js';
import { EngineRuns } from './flights/engine-runs.js';
import { Admission, ADMISSION_QUEUE_LIMIT } from './local/admission.js';
import type { EngineOptions, StartRun } from './engine-options.js';
import { isTerminal } from './statuses.js';
import type { Cluster } from './cluster/cluster.js';

export { ADMISSION_QUEUE_LIMIT, EngineBusyError } from './local/admission.js';
export type { CallTargetResolver, EngineOptions, ExecutionObserver, StartRun } from './engine-options.js';

/**
 * How deep call_workflow may nest (a top-level run is depth 0). Deep enough for real call
 * trees, small enough that runaway recursion fails within milliseconds and a few dozen rows.
 */
export const MAX_CALL_DEPTH = 16;

/** The error of an attempt in flight when its execution was cancelled. */
const CANCELLED_STEP_ERROR = JSON.stringify({
  name: 'StepError',
  code: 'cancelled',
  message: 'the execution was cancelled while this attempt ran',
  retryable: false,
  retry_after_ms: null,
});

/**
 * The in-process engine. The executions table is the queue: an execution is created (with its
 * trigger step) in one commit before anyone is told its id, then run here directly, with no
 * polling on the hot path. Waits, retries and call_workflow steps leave the execution `waiting`
 * (`run_at` when due by time); a timer, `runDue()`, or the end of an awaited child picks it up
 * again, also after a restart (`start()` resumes executions left running or due).
 * See ARCHITECTURE.md.
 */
export class Engine extends EngineRuns {
  private readonly queue = new StartQueue();
  private readonly admission: Admission;
  private timer: NodeJS.Timeout | null = null;
  /**
   * Whether `pending` executions may be queued in the database. A freed slot looks for them only
   * then: querying after every finished execution would cost a read per run at full throughput.
   */
  private mayHavePending = true;
  /** Bumped whenever an execution is queued pending, so a look-up racing with it does not clear the flag. */
  private pendingEpoch = 0;
  /** Due passes under way (a freed slot starts one), so `idle()` can wait for what they start. */
  private readonly duePasses = new Set<Promise<void>>();

  constructor(options: EngineOptions) {
    super(options);
    this.admission = new Admission(options.admissionQueueLimit ?? ADMISSION_QUEUE_LIMIT, () => this.queue.size);
  }

  /** Resumes executions a previous process left running, and those already due. */
  async start(): Promise<void> {
    this.stopped = false;
    if (this.cluster) {
      // Executions left running belong to their workers' leases; expired ones are claimed like any work.
      await this.cluster.start(this.options.timers ?? true);
      await this.cluster.requestClaim(true);
      await this.scheduleTimer();
      return;
    }
    const rows = await listResumable(this.options.db, this.options.clock.now(), 10_000);
    // Runs left running first, not held back by the limits: they held their slots when the
    // process stopped. Pending and due ones then take free slots like any start, oldest first;
    // the due passes find the rest.
    for (const row of rows.filter((r) => r.status === 'running')) {
      const plan = await this.plans.load(row.workflow_snapshot_id);
      this.slots.take(row.workflow_id, plan.settings.concurrencyLimit);
      this.dispatch(row, plan);
    }
    for (const row of rows.filter((r) => r.status !== 'running')) {
      this.mayHavePending = true;
      await this.tryDispatch(row);
    }
    await this.scheduleTimer();
  }

  /**
   * Stops: nothing new is claimed or started, runs in flight go on for the shutdown grace, then
   * those still running are stopped and, in a cluster, released for another worker to continue
   * at once (their steps in flight run again there, as the next attempt).
   */
  async stop(): Promise<void> {
    this.cluster?.stopClaiming();
    const grace = this.options.shutdownGraceMs ?? 0;
    if (grace > 0 && this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise((resolve) => (timer = setTimeout(resolve, grace)));
      await Promise.race([Promise.allSettled([...this.inFlight.values()].map((run) => run.done)), deadline]);
      clearTimeout(timer);
    }
    const unfinished = [...this.inFlight.keys()];
    this.stopped = true;
    this.recovery.stop();
    this.queue.clear();
    this.resumeWhenFree.clear();
    // Waits not written yet are written now, so the database says what these runs wait for.
    await Promise.allSettled(
      this.parked
        .drain()
        .filter((p) => p.deferred)
        .map((p) => p.run.commitWait(p.root)),
    );
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const run of this.inFlight.values()) run.cancel.abort();
    await Promise.allSettled([...this.inFlight.values()].map((run) => run.done));
    await this.batcher.drain();
    if (this.cluster) {
      await this.cluster.release(unfinished);
      await this.cluster.stop();
    }
  }

  /**
   * Creates an execution (committed before returning) and starts it when capacity allows. When
   * the queue of pending executions is full, waits for room first, at most `admissionTimeoutMs`
   * (then EngineBusyError, and nothing is created).
   */
  async run(start: StartRun, admissionTimeoutMs?: number): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const waited = await this.admission.enter(admissionTimeoutMs);
    const identity = runIdentity(start);
    try {
      const plan = await this.plans.load(start.snapshotId, start.graph);
      if (start.observer) this.answers.observe(identity.id, start.observer);
      return await this.admit(
        identity,
        plan,
        rootRows(plan, identity, start.trigger, this.options.clock.now(), start.firedRoots),
        start.alsoWrite,
        start.observer !== undefined && start.alsoWrite === undefined,
        start.observer !== undefined,
      );
    } catch (error) {
      this.answers.forget(identity.id);
      throw error;
    } finally {
      if (waited) this.admission.done();
    }
  }

  /** The plan of a snapshot (cached): a webhook delivery reads its node's config from it. */
  planOf(snapshotId: string): Promise<GraphPlan> {
    return this.plans.load(snapshotId);
  }

  /** Stops telling an observer (its HTTP caller gave up waiting); the run goes on. */
  unobserve(executionId: string): void {
    this.answers.forget(executionId);
  }

  /**
   * Creates several executions in ONE commit, with `alsoWrite` in the same transaction (a
   * platform event starting every workflow it triggers, its provider event id recorded once):
   * either all exist afterwards or none does, so a unique constraint written by `alsoWrite`
   * deduplicates redeliveries exactly. They start as `pending` and run as slots (or, in a
   * cluster, workers) take them. A start with an `observer` is answered like a synchronous
   * webhook's (an SMS answered by a respond step): registered before the commit, and in a
   * cluster the worker sends the answer to this process.
   */
  async runMany(
    starts: StartRun[],
    alsoWrite?: (trx: Transaction<Database>, executionIds: string[]) => Promise<void>,
  ): Promise<{ execution_id: string; status: ExecutionStatus }[]> {
    const entries = await this.pendingEntries(starts);
    // A start with an observer (an SMS answered through a respond step) is watched from before
    // its commit, so an answer cannot come before the watch; a failed commit forgets it.
    const observed: string[] = [];
    starts.forEach((start, i) => {
      if (!start.observer) return;
      this.answers.observe(entries[i]!.row.id, start.observer);
      observed.push(entries[i]!.row.id);
    });
    try {
      await this.batcher.write(async (trx) => {
        for (const entry of entries) await this.admitPending(trx, entry);
        if (alsoWrite)
          await alsoWrite(
            trx,
            entries.map((entry) => entry.row.id),
          );
      });
    } catch (error) {
      for (const id of observed) this.answers.forget(id);
      throw error;
    }
    this.startPending(entries);
    return entries.map((entry) => ({ execution_id: entry.row.id, status: 'pending' as const }));
  }

  /**
   * Like `runMany`, but `select` decides inside the transaction which of the prepared starts are
   * created, by index (a scheduler claiming due schedules and advancing them in the same commit);
   * the others are dropped. `select` may run more than once (a group commit that failed is
   * retried alone), so it must decide from what it reads in `trx`.
   */
  async runSelected(
    starts: StartRun[],
    select: (trx: Transaction<Database>) => Promise<ReadonlySet<number>>,
  ): Promise<{ execution_id: string; status: ExecutionStatus }[]> {
    const entries = await this.pendingEntries(starts);
    let chosen: QueuedStart[] = [];
    await this.batcher.write(async (trx) => {
      const indexes = await select(trx);
      chosen = entries.filter((_, index) => indexes.has(index));
      for (const entry of chosen) await this.admitPending(trx, entry);
    });
    this.startPending(chosen);
    return chosen.map((entry) => ({ execution_id: entry.row.id, status: 'pending' as const }));
  }

  /** A new `pending` execution in this commit: in a cluster handed to a worker or announced (Cluster.admit); alone, inserted. */
  private admitPending(trx: Transaction<Database>, entry: { row: ExecutionRow; steps: StepRow[] }): Promise<void> {
    return this.cluster ? this.cluster.admit(trx, entry.row, entry.steps) : insertExecution(trx, entry.row, entry.steps);
  }

  /** Plans of many snapshots in one read (see PlanCache.loadMany); missing snapshots are absent. */
  plansOf(snapshotIds: Iterable<string>): Promise<Map<string, GraphPlan>> {
    return this.plans.loadMany(snapshotIds);
  }

  private async pendingEntries(starts: StartRun[]): Promise<QueuedStart[]> {
    const now = this.options.clock.now();
    const entries: QueuedStart[] = [];
    const preloaded =
      starts.length > 1
        ? await this.plans.loadMany(starts.filter((start) => !start.graph).map((start) => start.snapshotId))
        : new Map<string, GraphPlan>();
    for (const start of starts) {
      const identity = runIdentity(start);
      const plan = (start.graph ? undefined : preloaded.get(start.snapshotId)) ?? (await this.plans.load(start.snapshotId, start.graph));
      const steps = rootRows(plan, identity, start.trigger, now, start.firedRoots);
      // An observed start in a cluster names this process, so the worker sends the answer back here.
      const observer = start.observer && this.cluster ? this.cluster.processId : null;
      entries.push({ row: newExecutionRow(identity, 'pending', steps.length, now, plan.settings.concurrencyLimit, observer), plan, steps });
    }
    return entries;
  }

  /** Executions just committed `pending`: a cluster's workers claim them; here they queue for slots. */
  private startPending(entries: QueuedStart[]): void {
    if (entries.length === 0) return;
    if (this.cluster) {
      void this.cluster.requestClaim(true);
      return;
    }
    for (const entry of entries) {
      if (this.queue.push(entry)) continue;
      this.mayHavePending = true;
      this.pendingEpoch += 1;
    }
    this.startQueued();
  }

  /** Retries a failed execution as a new one that continues from its failed step (see `retryStart`). */
  async retry(failed: ExecutionRow, userId: string | null): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const plan = await this.plans.load(failed.workflow_snapshot_id);
    const { identity, steps } = retryStart(plan, failed, await listSteps(this.options.db, failed.id), userId, this.options.clock.now());
    return this.admit(identity, plan, steps);
  }

  /**
   * Commits a child execution for a call_workflow step and starts it when there is capacity.
   * Its trigger payload is `{method: "CALL", headers: {}, query: {}, body: input}`.
   */
  async startChild(request: ChildRequest): Promise<void> {
    const depth = request.parent.call_depth + 1;
    if (depth > MAX_CALL_DEPTH) {
      throw new NonRetriableError(
        `call_workflow nests deeper than ${MAX_CALL_DEPTH} levels (runaway recursion?); execution ${request.parent.id} is at depth ${request.parent.call_depth}`,
        { code: 'call_depth_exceeded' },
      );
    }
    if (!this.options.resolveCallTarget)
      throw new NonRetriableError('call_workflow is not available in this engine', { code: 'not_available' });
    const target = await this.options.resolveCallTarget({
      workspaceId: request.parent.workspace_id,
      workflowId: request.workflowId,
      parentSnapshotId: request.parent.workflow_snapshot_id,
    });
    const plan = await this.plans.load(target.snapshotId, target.graph);
    const { identity, trigger } = childIdentity(request, target.snapshotId);
    await this.admit(identity, plan, rootRows(plan, identity, trigger, this.options.clock.now()));
  }

  /**
   * Commits a new execution with its first step rows, `running` when a slot is free (engine-wide
   * and for its workflow) and starts it, else `pending` for `runDue` to pick up in order.
   */
  private async admit(
    identity: ExecutionIdentity,
    plan: GraphPlan,
    steps: StepRow[],
    alsoWrite?: StartRun['alsoWrite'],
    early = false,
    awaited = false,
  ): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const limit = plan.settings.concurrencyLimit;
    if (this.cluster) return this.admitToCluster(this.cluster, identity, plan, steps, alsoWrite, awaited);
    // The slot is taken before the commit is awaited, so concurrent admissions cannot overbook.
    const status = this.slots.canStart(identity.workflow_id, limit) ? 'running' : 'pending';
    if (status === 'running') this.slots.take(identity.workflow_id, limit);
    const row = newExecutionRow(identity, status, steps.length, this.options.clock.now(), limit, null);
    const written = this.batcher.write(async (trx) => {
      await insertExecution(trx, row, steps);
      if (alsoWrite) await alsoWrite(trx, row.id);
    });
    // `early` (a caller waiting for the run's answer, not for its creation): the first step need
    // not wait for this commit, since its own rows commit after it in any case (the batcher
    // commits in order); if the insert fails, the run is stopped. Saves a commit's latency on a
    // synchronous webhook.
    const launchNow = status === 'running' && early;
    if (launchNow) this.launch({ row, plan, steps }, {});
    try {
      await written;
    } catch (error) {
      const flight = launchNow ? this.inFlight.get(row.id) : undefined;
      if (flight) {
        flight.cancelled = true;
        flight.cancel.abort();
      } else if (status === 'running' && !launchNow) {
        this.slots.release(identity.workflow_id);
      }
      throw error;
    }
    if (status === 'running') {
      if (!launchNow) this.launch({ row, plan, steps }, {});
    } else if (!this.queue.push({ row, plan, steps })) {
      this.mayHavePending = true;
      this.pendingEpoch += 1;
    }
    return { execution_id: row.id, status };
  }

  /**
   * In a cluster a new execution is committed `pending` with a notification for the workers;
   * the one that claims it runs it (this process first, when it runs steps). An API process
   * hands it to a worker in the same commit instead, where the limits allow (hand-off.ts).
   * `awaited`: this process holds a caller waiting for its answer, which the worker sends to it.
   */
  private async admitToCluster(
    cluster: Cluster,
    identity: ExecutionIdentity,
    plan: GraphPlan,
    steps: StepRow[],
    alsoWrite: StartRun['alsoWrite'],
    awaited: boolean,
  ): Promise<{ execution_id: string; status: ExecutionStatus }> {
    const row = newExecutionRow(
      identity,
      'pending',
      steps.length,
      this.options.clock.now(),
      plan.settings.concurrencyLimit,
      awaited ? cluster.processId : null,
    );
    await this.batcher.write(async (trx) => {
      await cluster.admit(trx, row, steps);
      if (alsoWrite) await alsoWrite(trx, row.id);
    });
    void cluster.requestClaim(true);
    return { execution_id: row.id, status: 'pending' };
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
    await this.batcher.write(
      async (trx) => {
        moved = await updateExecution(trx, execution.id, { status: 'cancelled', finished_at: now, updated_at: now, run_at: null }, [
          'pending',
          'running',
          'waiting',
        ]);
        if (moved) await failRunningSteps(trx, execution.id, CANCELLED_STEP_ERROR, now);
        if (moved && execution.parent_execution_id !== null) await wakeParent(trx, execution.parent_execution_id, execution.id, now);
        if (moved && this.cluster) {
          await this.cluster.announceCancel(trx, execution);
          if (execution.parent_execution_id !== null) await this.cluster.announceWork(trx);
        }
      },
      execution.parent_execution_id !== null ? [execution.id, execution.parent_execution_id] : [execution.id],
    );
    this.queue.remove(execution.id);
    this.parked.take(execution.id);
    const run = this.inFlight.get(execution.id);
    if (run) {
      run.cancelled = true;
      run.cancel.abort();
    }
    if (!moved) {
      const current = await findExecution(this.options.db, execution.id);
      return { cancelled: false, status: current?.status ?? execution.status };
    }
    this.answers.ended(execution.id, { status: 'cancelled' });
    this.metrics.executionFinished('cancelled');
    for (const child of await listAwaitedChildren(this.options.db, execution.id)) await this.cancel(child);
    if (execution.parent_execution_id !== null)
      this.childEnded(execution.parent_execution_id, execution.id, { status: 'cancelled', output: null, error: null });
    return { cancelled: true, status: 'cancelled' };
  }

  /** Runs every due pending or waiting execution (the timer calls this; so do tests). */
  runDue(): Promise<void> {
    if (this.cluster) return this.cluster.requestClaim(true).then(() => this.scheduleTimer());
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
  protected async tryDispatch(row: ExecutionRow): Promise<void> {
    const plan = await this.plans.load(row.workflow_snapshot_id);
    if (this.inFlight.has(row.id)) return;
    if (!this.slots.canStart(row.workflow_id, plan.settings.concurrencyLimit)) {
      this.mayHavePending = true;
      return;
    }
    this.slots.take(row.workflow_id, plan.settings.concurrencyLimit);
    if (row.status === 'pending') this.metrics.executionStarted();
    // Started from here, it must not start again from the in-memory queue.
    this.queue.remove(row.id);
    this.dispatch(row, plan);
  }

  /**
   * Resolves when no execution is in flight in this process and every wait is written (tests,
   * shutdown): deferred waits are written now rather than after their delay.
   */
  async idle(): Promise<void> {
    for (;;) {
      while (this.inFlight.size > 0 || this.duePasses.size > 0 || this.wakes.size > 0 || this.cluster?.passing) {
        await Promise.allSettled([...this.inFlight.values()].map((run) => run.done));
        await Promise.allSettled([...this.duePasses, ...this.wakes, this.cluster?.passing]);
      }
      const deferred = this.parked.deferred();
      if (deferred.length === 0) break;
      // A wait written now may be due at once (a child ended meanwhile): what that starts is waited for too.
      for (const parked of deferred) await this.writeDeferredWait(parked);
    }
    await this.batcher.drain();
  }

  protected slotFreed(row: ExecutionRow): void {
    this.startQueued();
    // A slot is free: look for pending executions the queue does not hold, if any may exist.
    if (this.mayHavePending) void this.runDue().catch((error: unknown) => this.options.onError?.(error, row.id));
  }

  /** Starts queued executions, oldest first, while slots are free (a workflow at its limit waits its turn). */
  private startQueued(): void {
    while (this.slots.free() > 0 && this.queue.size > 0) {
      const entry = this.queue.takeFirst(
        (candidate) =>
          !this.inFlight.has(candidate.row.id) && this.slots.canStart(candidate.row.workflow_id, candidate.plan.settings.concurrencyLimit),
      );
      if (!entry) return;
      this.slots.take(entry.row.workflow_id, entry.plan.settings.concurrencyLimit);
      const now = this.options.clock.now();
      this.launch(entry, { status: 'running', run_at: null, updated_at: now, started_at: now });
    }
    this.admission.release();
  }

  protected async scheduleTimer(): Promise<void> {
    if (!this.options.timers || this.stopped) return;
    const next = await nextDueAt(this.options.db);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (next === null) return;
    const delay = Math.max(0, Math.floor((parseTimestampMicros(next) ?? 0) / 1000) - this.options.clock.nowMs());
    // Timers longer than ~24 days overflow; a shorter re-check is harmless.
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.runDue().catch(() => {});
      },
      Math.min(delay, 2 ** 31 - 1),
    );
    this.timer.unref?.();
  }
}
