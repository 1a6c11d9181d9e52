import type { ExecutionRow, StepRow } from '../execution-store.js';
import { findExecution, listSteps, listStepsOfMany, loadEndedChildren } from '../execution-store.js';
import { RunCancel } from '../../lib/cancellation.js';
import { parseTimestampMicros } from '../../lib/clock.js';
import { ExecutionRun } from '../run/execution-run.js';
import type { ChildRequest, ChildResult, RunEnd } from '../run/run-types.js';
import type { GraphPlan } from '../run/graph-plan.js';
import { PlanCache } from '../run/plan-cache.js';
import { restoreFrame, type FrameState } from '../run/restore-state.js';
import { noteJournaledRows } from '../run/node-journal.js';
import { ParkedRuns, type ParkedRun, type QueuedStart } from './run-queue.js';
import { RunSlots } from './run-slots.js';
import { WriteBatcher } from '../commit/write-batcher.js';
import type { EngineOptions } from '../engine-options.js';
import { Answers } from './answers.js';
import { Cluster, type ClusterHost } from '../cluster/cluster.js';
import { lockExecutions, type Claimed } from '../cluster/cluster-store.js';
import { LeaseLostError } from '../commit/run-coordination.js';
import { RunRecovery, type Recovered } from './run-recovery.js';
import { noEngineMetrics, type EngineMetrics } from '../../observability/engine-metrics.js';
import { isRunEnd } from '../statuses.js';

/** How long a run waiting only for children stays `running` in the database before `waiting` is written. */
const DEFERRED_WAIT_MS = 20;

export interface InFlight {
  workflowId: string;
  cancel: RunCancel;
  cancelled: boolean;
  /** The run, once loaded: a child that ends hands its result to it. */
  run: ExecutionRun | null;
  /** Something it waits for became due while it was still finishing: resume it afterwards. */
  wakeAgain: boolean;
  done: Promise<void>;
}

/**
 * The engine's runs in this process (engine.ts builds on it): flights (executions running
 * here, each holding a slot), parked runs (waiting, kept in memory), the hand-over of a child's
 * end to its parent, and, in a cluster, what a claim dispatches and what a notification stops.
 * How executions are created, queued, cancelled and found due is engine.ts's.
 */
export abstract class EngineRuns {
  readonly batcher: WriteBatcher;
  protected readonly plans: PlanCache;
  protected readonly inFlight = new Map<string, InFlight>();
  protected readonly answers: Answers;
  /** Set when several processes share the database (PostgreSQL): claims, leases, notifications. */
  readonly cluster: Cluster | null;
  protected readonly parked = new ParkedRuns();
  /** Parked runs due to resume (a child ended) that found no free slot. */
  protected readonly resumeWhenFree = new Set<string>();
  protected readonly slots: RunSlots;
  protected stopped = false;
  /** Resumptions of parents whose child ended, and deferred waits being written, so `idle()` waits for them too. */
  protected readonly wakes = new Set<Promise<void>>();
  protected readonly metrics: EngineMetrics;
  /** Executions whose run failed here, taken up again after a pause (run-recovery.ts). */
  protected readonly recovery: RunRecovery;

  constructor(protected readonly options: EngineOptions) {
    this.metrics = options.metrics ?? noEngineMetrics;
    this.batcher = new WriteBatcher(options.db, options.cluster ? lockExecutions : undefined);
    this.plans = new PlanCache(options.db);
    this.slots = new RunSlots(options.maxConcurrent ?? 64);
    this.answers = new Answers(options.db, (error, id) => options.onError?.(error, id));
    this.cluster = options.cluster ? new Cluster(options.db, options.clock, options.cluster, this.clusterHost()) : null;
    this.recovery = new RunRecovery(
      (id) => this.resumeFailed(id),
      (id, attempts) =>
        options.onError?.(
          new Error(`execution ${id} is left running: its run failed ${attempts + 1} times; it resumes at the next start`),
          id,
        ),
      options.recoveryDelaysMs,
    );
  }

  /** Commits a child execution for a call_workflow step (engine.ts). */
  abstract startChild(request: ChildRequest): Promise<void>;
  /** Dispatches a due execution read from the database if a slot is free (engine.ts). */
  protected abstract tryDispatch(row: ExecutionRow): Promise<void>;
  /** A flight ended and gave its slot back: what waits for one may start (engine.ts, SQLite). */
  protected abstract slotFreed(row: ExecutionRow): void;
  protected abstract scheduleTimer(): Promise<void>;

  /**
   * Runs a due execution whose slot is taken: from its parked run when this process kept it,
   * else from its step rows (and the children it awaits) read back from the database.
   */
  protected dispatch(row: ExecutionRow, plan: GraphPlan): void {
    const now = this.options.clock.now();
    const opening = { status: 'running' as const, run_at: null, updated_at: now, started_at: row.started_at ?? now };
    const parked = this.parked.take(row.id);
    if (parked) {
      this.track(row, (flight) => this.advance(parked.row, parked.plan, parked.run, parked.root, flight, opening, true));
      return;
    }
    this.track(row, async (flight) => {
      const steps = await listSteps(this.options.db, row.id);
      const run = this.newRun(row, plan, steps);
      for (const [id, child] of await loadEndedChildren(this.options.db, steps)) run.children.set(id, child);
      await this.advance(row, plan, run, restoreFrame(plan, steps, {}, null), flight, opening);
    });
  }

  /** Starts a run of a new execution (its rows in hand); `opening` marks a queued one running. */
  protected launch(entry: QueuedStart, opening: Partial<ExecutionRow>): void {
    this.metrics.executionStarted();
    this.track(entry.row, (flight) =>
      this.advance(
        entry.row,
        entry.plan,
        this.newRun(entry.row, entry.plan, entry.steps),
        restoreFrame(entry.plan, entry.steps, {}, null),
        flight,
        opening,
        true,
      ),
    );
  }

  protected newRun(row: ExecutionRow, plan: GraphPlan, steps: StepRow[]): ExecutionRun {
    const deps = {
      db: this.options.db,
      clock: this.options.clock,
      batcher: this.batcher,
      settings: this.options.settings,
      stores: this.options.stores,
      agent: this.options.agent,
      startChild: (request: ChildRequest) => this.startChild(request),
      coordination: this.cluster ?? undefined,
      metrics: this.metrics,
    };
    const run = new ExecutionRun(deps, row, steps.length, plan.settings.savePayloads);
    noteJournaledRows(run, steps);
    return run;
  }

  protected track(row: ExecutionRow, body: (flight: InFlight) => Promise<void>): void {
    const flight: InFlight = {
      workflowId: row.workflow_id,
      cancel: new RunCancel(),
      cancelled: false,
      run: null,
      wakeAgain: false,
      done: Promise.resolve(),
    };
    this.inFlight.set(row.id, flight);
    let failed = false;
    flight.done = body(flight)
      .catch((error: unknown) => {
        // Another worker holds it now: this one stops, having written nothing more.
        if (error instanceof LeaseLostError) return;
        failed = true;
        this.options.onError?.(error, row.id);
      })
      .finally(() => {
        // A run that committed its wait released its lease: a claim may already have started the
        // next flight of the same execution, whose entry stays.
        if (this.inFlight.get(row.id) === flight) this.inFlight.delete(row.id);
        this.slots.release(row.workflow_id);
        if (this.stopped) return;
        // Its last commit stands and it is still `running`: taken up again after a pause (run-recovery.ts).
        if (failed) this.recovery.failed(row.id);
        else this.recovery.succeeded(row.id);
        if (this.cluster) {
          if (flight.wakeAgain) this.resumeParked(row.id);
          void this.cluster.requestClaim();
          return;
        }
        if (flight.wakeAgain) this.resumeParked(row.id);
        // Parked runs that became due while no slot was free go before queued starts.
        for (const id of [...this.resumeWhenFree]) {
          this.resumeWhenFree.delete(id);
          this.resumeParked(id);
        }
        this.slotFreed(row);
      });
  }

  protected async advance(
    row: ExecutionRow,
    plan: GraphPlan,
    run: ExecutionRun,
    root: FrameState,
    flight: InFlight,
    opening: Partial<ExecutionRow>,
    lazy = false,
  ): Promise<void> {
    flight.run = run;
    const ending = (end: RunEnd) => {
      if (row.parent_execution_id === null) return;
      const result: ChildResult =
        end.status === 'completed'
          ? { status: 'completed', output: end.output, error: null }
          : { status: 'failed', output: null, error: end.status === 'failed' ? end.error : null };
      this.childEnded(row.parent_execution_id, row.id, result);
    };
    const responded = (response: unknown) => this.answers.responded(row.id, response);
    const end = await run.advance(
      root,
      { cancel: flight.cancel, cancelled: () => flight.cancelled || this.stopped, ending, responded },
      opening,
      lazy,
      true,
    );
    if (end.status !== 'waiting') this.answers.ended(row.id, end);
    if (isRunEnd(end.status)) this.metrics.executionFinished(end.status);
    // In a cluster only a run that still holds its lease (its wait not written) stays in memory:
    // once written, another worker may continue it, and this copy would be stale.
    if (end.status === 'waiting' && this.cluster && !end.deferred) return;
    if (end.status === 'waiting') {
      const parked = { row, plan, run, root, deferred: end.deferred === true };
      const evicted = this.parked.park(parked);
      if (evicted?.deferred) await evicted.run.commitWait(evicted.root);
      if (parked.deferred) this.commitWaitLater(parked);
      // A child may have ended while this run was committing its wait.
      if (run.hasDue(root)) flight.wakeAgain = true;
      if (end.runAt !== null) await this.scheduleTimer();
    }
  }

  /**
   * Writes a deferred wait if the run is still parked after a short while (children that end
   * within it never cost the parent a commit: the call_workflow benchmark's children end in
   * well under a millisecond).
   */
  protected commitWaitLater(parked: ParkedRun): void {
    const timer = setTimeout(() => {
      if (this.parked.get(parked.row.id) !== parked || !parked.deferred) return;
      this.writeDeferredWait(parked).catch((error: unknown) => this.options.onError?.(error, parked.row.id));
    }, DEFERRED_WAIT_MS);
    timer.unref?.();
  }

  /**
   * Writes a parked run's deferred wait now. In a cluster the written wait gives up the lease:
   * another worker (or this one, through a claim) may continue the run, so no copy stays parked
   * here; a stale copy resumed by a child's end would run without a lease and its failed commit
   * would hold the parent's row while the claim that should take it skips it.
   */
  protected writeDeferredWait(parked: ParkedRun): Promise<void> {
    parked.deferred = false;
    if (this.cluster) this.parked.take(parked.row.id);
    // Tracked with the wakes: a wait that lands already due starts a claim `idle()` must wait for.
    const write: Promise<void> = parked.run.commitWait(parked.root).finally(() => this.wakes.delete(write));
    this.wakes.add(write);
    return write;
  }

  /**
   * A child execution ended. Its parent's run gets the result in process when this process
   * holds it (running or parked) and resumes at once; otherwise the parent is resumed from the
   * database, where the child's final commit made it due.
   */
  protected childEnded(parentId: string, childId: string, result: ChildResult): void {
    if (this.stopped) return;
    const flight = this.inFlight.get(parentId);
    if (flight?.run) {
      flight.run.children.set(childId, result);
      flight.wakeAgain = true;
      return;
    }
    const parked = this.parked.get(parentId);
    if (parked) {
      parked.run.children.set(childId, result);
      this.resumeParked(parentId);
      return;
    }
    this.wake(parentId);
  }

  /**
   * Resumes a parked run now if a slot is free; else it waits for one in `resumeWhenFree` (its
   * row may not be due in the database yet: a deferred wait is still `running` there).
   */
  protected resumeParked(id: string): void {
    const parked = this.parked.get(id);
    if (!parked) {
      this.wake(id);
      return;
    }
    if (this.inFlight.has(id)) return;
    if (!this.slots.canStart(parked.row.workflow_id, parked.plan.settings.concurrencyLimit)) {
      this.resumeWhenFree.add(id);
      return;
    }
    this.resumeWhenFree.delete(id);
    this.slots.take(parked.row.workflow_id, parked.plan.settings.concurrencyLimit);
    this.dispatch(parked.row, parked.plan);
  }

  /** Resumes an execution from the database if it waits and is due. */
  protected wake(id: string): void {
    if (this.stopped || this.inFlight.has(id)) return;
    if (this.cluster) {
      // Due in the database (the child's commit made it so): whichever worker claims it runs it.
      void this.cluster.requestClaim(true);
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

  /** What the cluster asks of this engine. */
  protected clusterHost(): ClusterHost {
    return {
      freeSlots: () => (this.stopped ? 0 : this.slots.free()),
      capacity: () => this.slots.size,
      dispatchClaimed: (claimed) => this.dispatchClaimed(claimed),
      held: () => [...this.inFlight.keys(), ...this.parked.deferred().map((parked) => parked.row.id)],
      leaseLost: (id) => {
        this.metrics.leaseExpired();
        this.stopLocally(id);
      },
      cancelled: (id) => this.stopLocally(id),
      answer: (message) => this.answers.receive(message),
      reconnected: () => this.answers.recheck(),
      dueAt: () => void this.scheduleTimer().catch((error: unknown) => this.options.onError?.(error, '')),
      onError: (error) => this.options.onError?.(error, ''),
    };
  }

  /**
   * Executions claimed by this worker in one pass: their slots are taken now; the step rows of
   * new ones came with the claim, those of the others not parked here are read in one query for
   * the batch (a query per execution was one of the round trips each delivery cost,
   * bench/results/cluster.md); each run starts once its plan and rows are loaded.
   */
  protected dispatchClaimed(batch: Claimed[]): void {
    const toLoad: string[] = [];
    const parkedRuns = new Map<string, ParkedRun>();
    for (const { row, takeover, was, dueAt, steps } of batch) {
      this.slots.take(row.workflow_id, null);
      if (takeover) this.metrics.takeover();
      if (was === 'pending') this.metrics.executionStarted();
      if (dueAt !== null)
        this.metrics.claimed(
          Math.max(0, ((parseTimestampMicros(this.options.clock.now()) ?? 0) - (parseTimestampMicros(dueAt) ?? 0)) / 1000),
        );
      const parked = this.parked.take(row.id);
      if (parked) parkedRuns.set(row.id, parked);
      else if (steps === null) toLoad.push(row.id);
    }
    const loading = toLoad.length > 0 ? listStepsOfMany(this.options.db, toLoad) : null;
    // Settled here too: a batch whose every run failed before awaiting it must not leave it unhandled.
    loading?.catch(() => {});
    for (const { row, steps: claimedSteps } of batch) {
      const parked = parkedRuns.get(row.id);
      if (parked) {
        this.track(row, (flight) => this.advance(parked.row, parked.plan, parked.run, parked.root, flight, {}, true));
        continue;
      }
      this.track(row, async (flight) => {
        const plan = await this.plans.load(row.workflow_snapshot_id);
        const steps = claimedSteps ?? (await loading!).get(row.id) ?? [];
        const run = this.newRun(row, plan, steps);
        for (const [id, child] of await loadEndedChildren(this.options.db, steps)) run.children.set(id, child);
        await this.advance(row, plan, run, restoreFrame(plan, steps, {}, null), flight, {});
      });
    }
  }

  /**
   * An execution whose run failed here, if still `running`, not in flight and (in a cluster)
   * still under this worker's lease, runs again from its rows, as at a start. In a cluster the
   * lease would otherwise run out first, and a worker never takes over its own expired lease: a
   * lone worker would leave the execution to its next start. Its commits check the lease as
   * always, so one another worker took over meanwhile stops at its first.
   */
  private async resumeFailed(id: string): Promise<Recovered> {
    // Asked again after each wait: a stop, or another path starting it, may come meanwhile.
    const elsewhere = () => this.stopped || this.inFlight.has(id);
    if (elsewhere()) return 'settled';
    const row = await findExecution(this.options.db, id);
    if (!row || row.status !== 'running' || elsewhere()) return 'settled';
    if (this.cluster && row.lease_owner !== this.cluster.processId) return 'settled';
    const plan = await this.plans.load(row.workflow_snapshot_id);
    if (elsewhere()) return 'settled';
    // Not held back by the limits, as at a start: it held its slot when it failed.
    this.slots.take(row.workflow_id, plan.settings.concurrencyLimit);
    this.dispatch(row, plan);
    return 'resumed';
  }

  /** Stops a run of this process without writing anything (cancelled elsewhere, or its lease lost). */
  protected stopLocally(id: string): void {
    this.parked.take(id);
    const flight = this.inFlight.get(id);
    if (!flight) return;
    flight.cancelled = true;
    flight.cancel.abort();
  }
}
