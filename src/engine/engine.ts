import type { Transaction } from 'kysely';
import type { Database, ExecutionStatus } from '../db/schema.js';
import { noEngineMetrics } from '../observability/engine-metrics.js';
import type { Cluster } from './cluster/cluster.js';
import { ClusterScheduler } from './cluster/cluster-scheduler.js';
import { lockExecutions } from './cluster/cluster-store.js';
import { WriteBatcher } from './commit/write-batcher.js';
import type { EngineOptions, RunOptions, StartRun } from './engine-options.js';
import {
  failRunningSteps,
  findExecution,
  listAwaitedChildren,
  listSteps,
  updateExecution,
  wakeParent,
  type ExecutionRow,
} from './execution-store.js';
import { Answers } from './answers.js';
import { recordDecision, type ApprovalDecision, type DecisionRecorded } from './approval-store.js';
import { DueTimer } from './flights/due-timer.js';
import type { EngineParts } from './flights/engine-parts.js';
import { Flights } from './flights/flights.js';
import type { QueuedStart } from './flights/parked-runs.js';
import { RunSlots } from './flights/run-slots.js';
import type { Scheduler, Started } from './flights/scheduler.js';
import { LocalScheduler } from './local/local-scheduler.js';
import { childIdentity, newExecutionRow, retryStart, rootRows, runIdentity } from './run/execution-start.js';
import type { GraphPlan } from './run/graph-plan.js';
import { PlanCache } from './run/plan-cache.js';
import { errorRunPreparer } from './run/error-start.js';
import { prepareRerun, type RerunRefusal, type RerunTarget } from './run/rerun-start.js';
import type { ChildRequest } from './run/run-types.js';
import { isTerminal } from './statuses.js';
import { NonRetriableError } from './step-errors.js';

export { ADMISSION_QUEUE_LIMIT, EngineBusyError } from './local/admission.js';
export type { CallTargetResolver, EngineOptions, ErrorWorkflowResolver } from './engine-options.js';
export type { ExecutionObserver, RunOptions, StartRun } from './engine-options.js';
export type { GraphPlan } from './run/graph-plan.js';
export type { RerunRefusal, RerunTarget } from './run/rerun-start.js';
export type { RunEnd } from './answers.js';

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
 * The engine. The executions table is the queue: an execution is created (with its trigger
 * step) in one commit before anyone is told its id, then run in process (flights/) as its
 * scheduler decides: alone, directly, with no polling on the hot path (local/); with several
 * processes on PostgreSQL, by whichever worker claims it under a lease (cluster/). Waits,
 * retries and call_workflow steps leave the execution `waiting` (`run_at` when due by time); a
 * timer, `runDue()`, or the end of an awaited child picks it up again, also after a restart
 * (`start()`). See ARCHITECTURE.md.
 */
export class Engine {
  readonly batcher: WriteBatcher;
  /** Set when several processes share the database (PostgreSQL): claims, leases, notifications. */
  readonly cluster: Cluster | null;
  private readonly parts: EngineParts;
  private readonly flights: Flights;
  private readonly scheduler: Scheduler;

  constructor(private readonly options: EngineOptions) {
    const { db, clock } = options;
    const onError = (error: unknown, executionId: string) => options.onError?.(error, executionId);
    this.batcher = new WriteBatcher(db, options.cluster ? lockExecutions : undefined);
    const timer = new DueTimer(
      db,
      clock,
      options.timers ?? false,
      () => this.runDue(),
      () => this.flights.stopped,
    );
    this.parts = {
      db,
      clock,
      settings: options.settings,
      stores: options.stores,
      agent: options.agent,
      batcher: this.batcher,
      plans: new PlanCache(db),
      slots: new RunSlots(options.maxConcurrent ?? 64),
      answers: new Answers(db, onError),
      metrics: options.metrics ?? noEngineMetrics,
      timer,
      onError,
      errorRun: options.resolveErrorWorkflow
        ? errorRunPreparer(options.resolveErrorWorkflow, {
            plan: (snapshotId) => this.parts.plans.load(snapshotId),
            now: () => clock.now(),
            admit: (trx, row, steps) => this.scheduler.admitPending(trx, row, steps),
            start: (row, plan, steps) => this.startPending([{ row, plan, steps }]),
          })
        : undefined,
    };
    this.flights = new Flights(this.parts, (request) => this.startChild(request), options.recoveryDelaysMs);
    if (options.cluster) {
      const scheduler = new ClusterScheduler(this.parts, this.flights, options.cluster, options.timers ?? true);
      this.scheduler = scheduler;
      this.cluster = scheduler.cluster;
    } else {
      this.scheduler = new LocalScheduler(this.parts, this.flights, options.admissionQueueLimit);
      this.cluster = null;
    }
    this.flights.attach(this.scheduler);
  }

  /** Resumes executions a previous process left running, and those already due (in a cluster: starts claiming). */
  async start(): Promise<void> {
    this.flights.start();
    await this.scheduler.start();
  }

  /**
   * Stops: nothing new is claimed or started, runs in flight go on for the shutdown grace, then
   * those still running are stopped and, in a cluster, released for another worker to continue
   * at once (their steps in flight run again there, as the next attempt).
   */
  async stop(): Promise<void> {
    const { inFlight, parked } = this.flights;
    this.scheduler.stopTaking();
    const grace = this.options.shutdownGraceMs ?? 0;
    if (grace > 0 && inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise((resolve) => (timer = setTimeout(resolve, grace)));
      await Promise.race([Promise.allSettled([...inFlight.values()].map((run) => run.done)), deadline]);
      clearTimeout(timer);
    }
    const unfinished = [...inFlight.keys()];
    this.flights.halt();
    this.scheduler.clear();
    // Waits not written yet are written now, so the database says what these runs wait for.
    await Promise.allSettled(
      parked
        .drain()
        .filter((p) => p.deferred)
        .map((p) => p.run.commitWait(p.root)),
    );
    this.parts.timer.clear();
    for (const run of inFlight.values()) run.cancel.abort();
    await Promise.allSettled([...inFlight.values()].map((run) => run.done));
    await this.batcher.drain();
    await this.scheduler.close(unfinished);
  }

  /**
   * Creates an execution (committed before returning) and starts it when capacity allows. When
   * the queue of pending executions is full, waits for room first, at most
   * `options.admissionTimeoutMs` (then EngineBusyError, and nothing is created).
   */
  async run(start: StartRun, options: RunOptions = {}): Promise<Started> {
    const waited = await this.scheduler.enter(options.admissionTimeoutMs);
    const identity = runIdentity(start);
    const { answers, plans, clock } = this.parts;
    try {
      const plan = await plans.load(start.snapshotId, start.graph);
      if (start.observer) answers.observe(identity.id, start.observer);
      const observed = start.observer !== undefined;
      return await this.scheduler.admit(identity, plan, rootRows(plan, identity, start.trigger, clock.now(), start.firedRoots), {
        alsoWrite: start.alsoWrite,
        startEarly: observed && start.alsoWrite === undefined,
        awaited: observed,
      });
    } catch (error) {
      answers.forget(identity.id);
      throw error;
    } finally {
      if (waited) this.scheduler.entered();
    }
  }

  /** The plan of a snapshot (cached): a webhook delivery reads its node's config from it. */
  planOf(snapshotId: string): Promise<GraphPlan> {
    return this.parts.plans.load(snapshotId);
  }

  /** Plans of many snapshots in one read (see PlanCache.loadMany); missing snapshots are absent. */
  plansOf(snapshotIds: Iterable<string>): Promise<Map<string, GraphPlan>> {
    return this.parts.plans.loadMany(snapshotIds);
  }

  /** Stops telling an observer (its HTTP caller gave up waiting); the run goes on. */
  unobserve(executionId: string): void {
    this.parts.answers.forget(executionId);
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
  async runMany(starts: StartRun[], alsoWrite?: (trx: Transaction<Database>, executionIds: string[]) => Promise<void>): Promise<Started[]> {
    const entries = await this.pendingEntries(starts);
    const { answers } = this.parts;
    // A start with an observer (an SMS answered through a respond step) is watched from before
    // its commit, so an answer cannot come before the watch; a failed commit forgets it.
    const observed: string[] = [];
    starts.forEach((start, i) => {
      if (!start.observer) return;
      answers.observe(entries[i]!.row.id, start.observer);
      observed.push(entries[i]!.row.id);
    });
    try {
      await this.batcher.write(async (trx) => {
        for (const entry of entries) await this.scheduler.admitPending(trx, entry.row, entry.steps);
        if (alsoWrite)
          await alsoWrite(
            trx,
            entries.map((entry) => entry.row.id),
          );
      });
    } catch (error) {
      for (const id of observed) answers.forget(id);
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
  async runSelected(starts: StartRun[], select: (trx: Transaction<Database>) => Promise<ReadonlySet<number>>): Promise<Started[]> {
    const entries = await this.pendingEntries(starts);
    let chosen: QueuedStart[] = [];
    await this.batcher.write(async (trx) => {
      const indexes = await select(trx);
      chosen = entries.filter((_, index) => indexes.has(index));
      for (const entry of chosen) await this.scheduler.admitPending(trx, entry.row, entry.steps);
    });
    this.startPending(chosen);
    return chosen.map((entry) => ({ execution_id: entry.row.id, status: 'pending' as const }));
  }

  private async pendingEntries(starts: StartRun[]): Promise<QueuedStart[]> {
    const { plans, clock } = this.parts;
    const now = clock.now();
    const entries: QueuedStart[] = [];
    const preloaded =
      starts.length > 1
        ? await plans.loadMany(starts.filter((start) => !start.graph).map((start) => start.snapshotId))
        : new Map<string, GraphPlan>();
    for (const start of starts) {
      const identity = runIdentity(start);
      const plan = (start.graph ? undefined : preloaded.get(start.snapshotId)) ?? (await plans.load(start.snapshotId, start.graph));
      const steps = rootRows(plan, identity, start.trigger, now, start.firedRoots);
      // An observed start in a cluster names this process, so the worker sends the answer back here.
      const waiter = start.observer ? this.scheduler.waiterId : null;
      entries.push({ row: newExecutionRow(identity, 'pending', steps.length, now, plan.settings.concurrencyLimit, waiter), plan, steps });
    }
    return entries;
  }

  /** Executions just committed `pending`: a cluster's workers claim them; alone they queue for slots. */
  private startPending(entries: QueuedStart[]): void {
    if (entries.length > 0) this.scheduler.startPending(entries);
  }

  /** Retries a failed execution as a new one that continues from its failed step (see `retryStart`). */
  async retry(failed: ExecutionRow, userId: string | null): Promise<Started> {
    const { db, plans, clock } = this.parts;
    const plan = await plans.load(failed.workflow_snapshot_id);
    const { identity, steps } = retryStart(plan, failed, await listSteps(db, failed.id), userId, clock.now());
    return this.scheduler.admit(identity, plan, steps, {});
  }

  /** Re-runs `source` from a node (run/rerun-start.ts): the reused records commit with the new execution. */
  async rerun(source: ExecutionRow, target: RerunTarget): Promise<Started | RerunRefusal> {
    const start = await prepareRerun(this.parts, source, target);
    return 'reason' in start ? start : this.scheduler.admit(start.identity, start.plan, start.steps, {});
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
    const plan = await this.parts.plans.load(target.snapshotId, target.graph);
    const { identity, trigger } = childIdentity(request, target.snapshotId);
    await this.scheduler.admit(identity, plan, rootRows(plan, identity, trigger, this.parts.clock.now()), {});
  }

  /**
   * Cancels a pending, running or waiting execution: the row moves to `cancelled` first (so no
   * step starts afterwards), then the running step is aborted, the children its call steps
   * await are cancelled too, and a parent awaiting this one is woken. Returns the new status, or
   * the terminal status it already had (the caller answers 409 then).
   */
  async cancel(execution: ExecutionRow): Promise<{ cancelled: boolean; status: ExecutionStatus }> {
    if (isTerminal(execution.status)) return { cancelled: false, status: execution.status };
    const { db, clock, answers, metrics } = this.parts;
    const now = clock.now();
    const parentId = execution.parent_execution_id;
    let moved = false;
    await this.batcher.write(
      async (trx) => {
        moved = await updateExecution(trx, execution.id, { status: 'cancelled', finished_at: now, updated_at: now, run_at: null }, [
          'pending',
          'running',
          'waiting',
        ]);
        if (!moved) return;
        await failRunningSteps(trx, execution.id, CANCELLED_STEP_ERROR, now);
        if (parentId !== null) await wakeParent(trx, parentId, execution.id, now);
        await this.scheduler.announceCancel(trx, execution);
      },
      parentId !== null ? [execution.id, parentId] : [execution.id],
    );
    this.scheduler.forget(execution.id);
    this.flights.stopLocally(execution.id);
    if (!moved) {
      const current = await findExecution(db, execution.id);
      return { cancelled: false, status: current?.status ?? execution.status };
    }
    answers.ended(execution.id, { status: 'cancelled' });
    metrics.executionFinished('cancelled');
    for (const child of await listAwaitedChildren(db, execution.id)) await this.cancel(child);
    if (parentId !== null) this.flights.childEnded(parentId, execution.id, { status: 'cancelled', output: null, error: null });
    return { cancelled: true, status: 'cancelled' };
  }

  /**
   * A decision on a waiting approval step (approval-store.ts `recordDecision`, exactly once by
   * its primary key), committed with the step and execution made due and, in a cluster, a turn
   * for a worker to claim it; then the run held here, if any, resumes it (Flights.decided).
   */
  async decide(execution: ExecutionRow, stepId: string, decision: ApprovalDecision): Promise<DecisionRecorded> {
    const target = { executionId: execution.id, workspaceId: execution.workspace_id, stepId };
    let result = { recorded: false, refusal: 'no_step' } as DecisionRecorded;
    await this.batcher.write(
      async (trx) => {
        result = await recordDecision(trx, target, decision);
        if (result.recorded) await this.cluster?.announceWork(trx);
      },
      [execution.id],
    );
    if (result.recorded) this.flights.decided(execution.id, result.due ?? stepId);
    return result;
  }

  /** Runs every due pending or waiting execution (the timer calls this; so do tests). */
  runDue(): Promise<void> {
    return this.scheduler.runDue();
  }

  /**
   * Resolves when no execution is in flight in this process and every wait is written (tests,
   * shutdown): deferred waits are written now rather than after their delay.
   */
  async idle(): Promise<void> {
    const { flights, scheduler } = this;
    for (;;) {
      while (flights.busy || scheduler.passes().length > 0) {
        await Promise.allSettled([...flights.inFlight.values()].map((run) => run.done));
        await Promise.allSettled([...scheduler.passes(), ...flights.wakes]);
      }
      const deferred = flights.parked.deferred();
      if (deferred.length === 0) break;
      // A wait written now may be due at once (a child ended meanwhile): what that starts is waited for too.
      for (const parked of deferred) await flights.writeDeferredWait(parked);
    }
    await this.batcher.drain();
  }
}
