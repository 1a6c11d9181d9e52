import { RunCancel } from '../../lib/cancellation.js';
import { LeaseLostError } from '../commit/run-coordination.js';
import { findExecution, listSteps, loadEndedChildren, type ExecutionRow, type StepRow } from '../execution-store.js';
import { ExecutionRun } from '../run/execution-run.js';
import { decidedWhileHeld } from '../run/approval-runner.js';
import type { GraphPlan } from '../run/graph-plan.js';
import { noteJournaledRows } from '../run/node-journal.js';
import { restoreFrame } from '../run/restore-state.js';
import type { ChildRequest, ChildResult, RunEnd } from '../run/run-types.js';
import { isRunEnd } from '../statuses.js';
import type { EngineParts } from './engine-parts.js';
import { ParkedRuns, type ParkedRun, type QueuedStart } from './parked-runs.js';
import { RunRecovery, type Recovered } from './run-recovery.js';
import type { FlightHooks } from './scheduler.js';

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
 * The engine's runs in this process: flights (executions running here, each holding a slot),
 * parked runs (waiting, kept in memory), the hand-over of a child's end to its parent, and runs
 * that failed here taken up again. Which executions run, and when, is the scheduler's
 * (`FlightHooks`, attached once it exists); how executions are created is engine.ts's.
 */
export class Flights {
  readonly inFlight = new Map<string, InFlight>();
  readonly parked = new ParkedRuns();
  /** Parked runs due to resume (a child ended) that found no free slot. */
  private readonly resumeWhenFree = new Set<string>();
  /** Resumptions of parents whose child ended, and deferred waits being written, so `idle()` waits for them too. */
  readonly wakes = new Set<Promise<void>>();
  private halted = false;
  /** Executions whose run failed here, taken up again after a pause (run-recovery.ts). */
  readonly recovery: RunRecovery;
  private hooks!: FlightHooks;

  constructor(
    private readonly parts: EngineParts,
    /** Commits a child execution for a call_workflow step (engine.ts). */
    private readonly startChild: (request: ChildRequest) => Promise<void>,
    recoveryDelaysMs?: readonly number[],
  ) {
    this.recovery = new RunRecovery(
      (id) => this.resumeFailed(id),
      (id, attempts) =>
        parts.onError(new Error(`execution ${id} is left running: its run failed ${attempts + 1} times; it resumes at the next start`), id),
      recoveryDelaysMs,
    );
  }

  /** The scheduler, once built (it is built with these flights). */
  attach(hooks: FlightHooks): void {
    this.hooks = hooks;
  }

  /** Set by a stop (`halt`): nothing new starts; cleared by a start (`resume`). */
  get stopped(): boolean {
    return this.halted;
  }

  /** Whether a run or a wake-up is under way here. */
  get busy(): boolean {
    return this.inFlight.size > 0 || this.wakes.size > 0;
  }

  /** A start (again, after a stop). */
  start(): void {
    this.halted = false;
  }

  /** A stop: nothing new starts, no failed run is taken up again, no parked run waits for a slot. */
  halt(): void {
    this.halted = true;
    this.recovery.stop();
    this.resumeWhenFree.clear();
  }

  /**
   * Runs a due execution whose slot is taken: from its parked run when this process kept it,
   * else from its step rows (and the children it awaits) read back from the database.
   */
  dispatch(row: ExecutionRow, plan: GraphPlan): void {
    const now = this.parts.clock.now();
    const opening = { status: 'running' as const, run_at: null, updated_at: now, started_at: row.started_at ?? now };
    const parked = this.parked.take(row.id);
    if (parked) return this.continueParked(parked, opening);
    this.resume(row, async () => ({ plan, steps: await listSteps(this.parts.db, row.id) }), opening);
  }

  /** Starts a run of a new execution (its rows in hand); `opening` marks a queued one running. */
  launch(entry: QueuedStart, opening: Partial<ExecutionRow>): void {
    this.parts.metrics.executionStarted();
    const { row, plan, steps } = entry;
    this.track(row, (flight) =>
      this.advance(flight, { row, plan, run: this.newRun(row, plan, steps), root: restoreFrame(plan, steps, {}, null) }, opening, true),
    );
  }

  /** Continues a parked run (its slot taken). */
  continueParked(parked: ParkedRun, opening: Partial<ExecutionRow>): void {
    this.track(parked.row, (flight) => this.advance(flight, parked, opening, true));
  }

  /** Runs an execution (its slot taken) from its plan and step rows, once `load` has them, and the children it awaits. */
  resume(row: ExecutionRow, load: () => Promise<{ plan: GraphPlan; steps: StepRow[] }>, opening: Partial<ExecutionRow>): void {
    this.track(row, async (flight) => {
      const { plan, steps } = await load();
      const run = this.newRun(row, plan, steps);
      for (const [id, child] of await loadEndedChildren(this.parts.db, steps)) run.children.set(id, child);
      await this.advance(flight, { row, plan, run, root: restoreFrame(plan, steps, {}, null) }, opening, false);
    });
  }

  private newRun(row: ExecutionRow, plan: GraphPlan, steps: StepRow[]): ExecutionRun {
    const { db, clock, batcher, settings, stores, agent, metrics, answers, errorRun } = this.parts;
    const { startChild } = this;
    const { coordination } = this.hooks;
    const deps = { db, clock, batcher, settings, stores, agent, startChild, coordination, metrics, answers, errorRun };
    const run = new ExecutionRun(deps, row, steps.length, plan.settings.savePayloads);
    noteJournaledRows(run, steps);
    return run;
  }

  private track(row: ExecutionRow, body: (flight: InFlight) => Promise<void>): void {
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
        this.parts.onError(error, row.id);
      })
      .finally(() => {
        // A run that committed its wait released its lease: a claim may already have started the
        // next flight of the same execution, whose entry stays.
        if (this.inFlight.get(row.id) === flight) this.inFlight.delete(row.id);
        this.parts.slots.release(row.workflow_id);
        if (this.stopped) return;
        // Its last commit stands and it is still `running`: taken up again after a pause (run-recovery.ts).
        if (failed) this.recovery.failed(row.id);
        else this.recovery.succeeded(row.id);
        if (flight.wakeAgain) this.resumeParked(row.id);
        this.hooks.flightEnded(row);
      });
  }

  /**
   * One stretch of a run. `lazy`: the run is held in this process (new, queued or parked), so
   * its opening changes ride on its next commit (ExecutionRun.advance).
   */
  private async advance(
    flight: InFlight,
    { row, plan, run, root }: Omit<ParkedRun, 'deferred'>,
    opening: Partial<ExecutionRow>,
    lazy: boolean,
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
    const control = { cancel: flight.cancel, cancelled: () => flight.cancelled || this.stopped, ending };
    const end = await run.advance(root, control, { opening, lazy, deferWait: true });
    if (end.status !== 'waiting') this.parts.answers.ended(row.id, end);
    if (isRunEnd(end.status)) this.parts.metrics.executionFinished(end.status);
    if (end.status !== 'waiting') return;
    // In a cluster only a run that still holds its lease (its wait not written) stays in memory:
    // once written, another worker may continue it, and this copy would be stale.
    // Decided while the run held it (approval-runner.ts): resumed once this flight ends.
    const decided = !end.deferred && (await decidedWhileHeld(run, root, !this.hooks.parksWrittenWaits));
    if (!this.hooks.parksWrittenWaits && !end.deferred) {
      if (decided) flight.wakeAgain = true;
      return;
    }
    const parked = { row, plan, run, root, deferred: end.deferred === true };
    const evicted = this.parked.park(parked);
    if (evicted?.deferred) await evicted.run.commitWait(evicted.root);
    if (parked.deferred) this.commitWaitLater(parked);
    // A child may have ended while this run was committing its wait.
    if (run.hasDue(root)) flight.wakeAgain = true;
    if (end.runAt !== null) await this.parts.timer.schedule();
  }

  /**
   * Writes a deferred wait if the run is still parked after a short while (children that end
   * within it never cost the parent a commit: the call_workflow benchmark's children end in
   * well under a millisecond).
   */
  private commitWaitLater(parked: ParkedRun): void {
    const timer = setTimeout(() => {
      if (this.parked.get(parked.row.id) !== parked || !parked.deferred) return;
      this.writeDeferredWait(parked).catch((error: unknown) => this.parts.onError(error, parked.row.id));
    }, DEFERRED_WAIT_MS);
    timer.unref?.();
  }

  /**
   * Writes a parked run's deferred wait now. In a cluster the written wait gives up the lease:
   * another worker (or this one, through a claim) may continue the run, so no copy stays parked
   * here; a stale copy resumed by a child's end would run without a lease and its failed commit
   * would hold the parent's row while the claim that should take it skips it.
   */
  writeDeferredWait(parked: ParkedRun): Promise<void> {
    parked.deferred = false;
    if (!this.hooks.parksWrittenWaits) this.parked.take(parked.row.id);
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
  childEnded(parentId: string, childId: string, result: ChildResult): void {
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
   * An approval step of this execution was decided (its commit made the step and, if waiting, the
   * execution due): a run held here (in flight or parked) is told and resumes it; otherwise the
   * execution resumes from the database, like a parent whose child ended elsewhere.
   */
  decided(executionId: string, stepId: string): void {
    if (this.stopped) return;
    const held = this.inFlight.get(executionId)?.run ?? this.parked.get(executionId)?.run;
    held?.decided.add(stepId);
    const flight = this.inFlight.get(executionId);
    if (flight) flight.wakeAgain = true;
    else this.resumeParked(executionId);
  }

  /** Parked runs that became due while no slot was free, resumed now (a slot was freed; before queued starts). */
  resumeWaitingForSlots(): void {
    for (const id of [...this.resumeWhenFree]) {
      this.resumeWhenFree.delete(id);
      this.resumeParked(id);
    }
  }

  /**
   * Resumes a parked run now if a slot is free; else it waits for one in `resumeWhenFree` (its
   * row may not be due in the database yet: a deferred wait is still `running` there).
   */
  private resumeParked(id: string): void {
    const parked = this.parked.get(id);
    if (!parked) {
      this.wake(id);
      return;
    }
    if (this.inFlight.has(id)) return;
    const { slots } = this.parts;
    if (!slots.canStart(parked.row.workflow_id, parked.plan.settings.concurrencyLimit)) {
      this.resumeWhenFree.add(id);
      return;
    }
    this.resumeWhenFree.delete(id);
    slots.take(parked.row.workflow_id, parked.plan.settings.concurrencyLimit);
    this.dispatch(parked.row, parked.plan);
  }

  /** Resumes an execution from the database if it waits and is due (the scheduler's way). */
  private wake(id: string): void {
    if (this.stopped || this.inFlight.has(id)) return;
    const woken = this.hooks.wake(id);
    if (!woken) return;
    const pass: Promise<void> = woken.catch((error: unknown) => this.parts.onError(error, id)).finally(() => this.wakes.delete(pass));
    this.wakes.add(pass);
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
    const row = await findExecution(this.parts.db, id);
    if (!row || row.status !== 'running' || elsewhere()) return 'settled';
    if (!this.hooks.ownsAfterFailure(row)) return 'settled';
    const plan = await this.parts.plans.load(row.workflow_snapshot_id);
    if (elsewhere()) return 'settled';
    // Not held back by the limits, as at a start: it held its slot when it failed.
    this.parts.slots.take(row.workflow_id, plan.settings.concurrencyLimit);
    this.dispatch(row, plan);
    return 'resumed';
  }

  /** Stops a run of this process without writing anything (cancelled here or elsewhere, or its lease lost). */
  stopLocally(id: string): void {
    this.parked.take(id);
    this.cancelFlight(id);
  }

  /** Stops the run in flight here, if any, without writing anything. */
  cancelFlight(id: string): void {
    const flight = this.inFlight.get(id);
    if (!flight) return;
    flight.cancelled = true;
    flight.cancel.abort();
  }
}
