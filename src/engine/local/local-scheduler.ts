import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { findExecution, insertExecution, listDue, listResumable, type ExecutionRow, type StepRow } from '../execution-store.js';
import type { EngineParts } from '../flights/engine-parts.js';
import type { Flights } from '../flights/flights.js';
import type { QueuedStart } from '../flights/parked-runs.js';
import type { AdmitOptions, Scheduler, Started } from '../flights/scheduler.js';
import { newExecutionRow, type ExecutionIdentity } from '../run/execution-start.js';
import type { GraphPlan } from '../run/graph-plan.js';
import { Admission, ADMISSION_QUEUE_LIMIT } from './admission.js';
import { StartQueue } from './start-queue.js';

/**
 * One process owns every execution (SQLite): new executions run at once while slots are free
 * (engine-wide and per workflow), else they queue `pending`, in memory (start-queue.ts) and in
 * the database, oldest first; a freed slot starts the next. Due waits and pending rows the queue
 * does not hold are found by due passes (the timer, a freed slot, a child's end).
 */
export class LocalScheduler implements Scheduler {
  readonly parksWrittenWaits = true;
  readonly waiterId = null;
  readonly coordination = undefined;
  private readonly queue = new StartQueue();
  private readonly admission: Admission;
  /**
   * Whether `pending` executions may be queued in the database. A freed slot looks for them only
   * then: querying after every finished execution would cost a read per run at full throughput.
   */
  private mayHavePending = true;
  /** Bumped whenever an execution is queued pending, so a look-up racing with it does not clear the flag. */
  private pendingEpoch = 0;
  /** Due passes under way (a freed slot starts one), so `idle()` can wait for what they start. */
  private readonly duePasses = new Set<Promise<void>>();

  constructor(
    private readonly parts: EngineParts,
    private readonly flights: Flights,
    admissionQueueLimit = ADMISSION_QUEUE_LIMIT,
  ) {
    this.admission = new Admission(admissionQueueLimit, () => this.queue.size);
  }

  /** Resumes executions a previous process left running, and those already due. */
  async start(): Promise<void> {
    const { db, clock, plans, slots } = this.parts;
    const rows = await listResumable(db, clock.now(), 10_000);
    // Runs left running first, not held back by the limits: they held their slots when the
    // process stopped. Pending and due ones then take free slots like any start, oldest first;
    // the due passes find the rest.
    for (const row of rows.filter((r) => r.status === 'running')) {
      const plan = await plans.load(row.workflow_snapshot_id);
      slots.take(row.workflow_id, plan.settings.concurrencyLimit);
      this.flights.dispatch(row, plan);
    }
    for (const row of rows.filter((r) => r.status !== 'running')) {
      this.mayHavePending = true;
      await this.tryDispatch(row);
    }
    await this.parts.timer.schedule();
  }

  enter(timeoutMs?: number): Promise<boolean> {
    return this.admission.enter(timeoutMs);
  }

  entered(): void {
    this.admission.done();
  }

  /**
   * Commits a new execution with its first step rows, `running` when a slot is free (engine-wide
   * and for its workflow) and starts it, else `pending` for the queue or a due pass, in order.
   */
  async admit(identity: ExecutionIdentity, plan: GraphPlan, steps: StepRow[], { alsoWrite, startEarly }: AdmitOptions): Promise<Started> {
    const { slots, batcher, clock } = this.parts;
    const limit = plan.settings.concurrencyLimit;
    // The slot is taken before the commit is awaited, so concurrent admissions cannot overbook.
    const status = slots.canStart(identity.workflow_id, limit) ? 'running' : 'pending';
    if (status === 'running') slots.take(identity.workflow_id, limit);
    const row = newExecutionRow(identity, status, steps.length, clock.now(), limit, null);
    const written = batcher.write(async (trx) => {
      await insertExecution(trx, row, steps);
      if (alsoWrite) await alsoWrite(trx, row.id);
    });
    // `startEarly` (a caller waiting for the run's answer, not for its creation): the first step
    // need not wait for this commit, since its own rows commit after it in any case (the batcher
    // commits in order); if the insert fails, the run is stopped. Saves a commit's latency on a
    // synchronous webhook.
    const launchNow = status === 'running' && startEarly === true;
    if (launchNow) this.flights.launch({ row, plan, steps }, {});
    try {
      await written;
    } catch (error) {
      if (launchNow) this.flights.cancelFlight(row.id);
      else if (status === 'running') slots.release(identity.workflow_id);
      throw error;
    }
    if (status === 'running') {
      if (!launchNow) this.flights.launch({ row, plan, steps }, {});
    } else if (!this.queue.push({ row, plan, steps })) {
      this.mayHavePending = true;
      this.pendingEpoch += 1;
    }
    return { execution_id: row.id, status };
  }

  admitPending(trx: Transaction<Database>, row: ExecutionRow, steps: StepRow[]): Promise<void> {
    return insertExecution(trx, row, steps);
  }

  /** Executions just committed `pending`: they queue for slots. */
  startPending(entries: QueuedStart[]): void {
    for (const entry of entries) {
      if (this.queue.push(entry)) continue;
      this.mayHavePending = true;
      this.pendingEpoch += 1;
    }
    this.startQueued();
  }

  /** No other process runs executions here: nobody to tell. */
  async announceCancel(): Promise<void> {}

  forget(executionId: string): void {
    this.queue.remove(executionId);
  }

  runDue(): Promise<void> {
    const pass = this.duePass().finally(() => this.duePasses.delete(pass));
    this.duePasses.add(pass);
    return pass;
  }

  passes(): Promise<unknown>[] {
    return [...this.duePasses];
  }

  private async duePass(): Promise<void> {
    const capacity = this.parts.slots.free();
    if (capacity > 0) {
      const epoch = this.pendingEpoch;
      const blocked = this.parts.slots.blockedWorkflows();
      const due = await listDue(this.parts.db, this.parts.clock.now(), capacity, blocked);
      // Fewer due rows than free slots: the queue is drained, unless something was queued
      // meanwhile or a workflow's own limit holds some back.
      if (due.length < capacity && epoch === this.pendingEpoch && blocked.length === 0) this.mayHavePending = false;
      for (const row of due) await this.tryDispatch(row);
    }
    await this.parts.timer.schedule();
  }

  /** Dispatches a due execution if it is not running here and a slot is free for it. */
  private async tryDispatch(row: ExecutionRow): Promise<void> {
    const { plans, slots, metrics } = this.parts;
    const plan = await plans.load(row.workflow_snapshot_id);
    if (this.flights.inFlight.has(row.id)) return;
    if (!slots.canStart(row.workflow_id, plan.settings.concurrencyLimit)) {
      this.mayHavePending = true;
      return;
    }
    slots.take(row.workflow_id, plan.settings.concurrencyLimit);
    if (row.status === 'pending') metrics.executionStarted();
    // Started from here, it must not start again from the in-memory queue.
    this.queue.remove(row.id);
    this.flights.dispatch(row, plan);
  }

  /** Starts queued executions, oldest first, while slots are free (a workflow at its limit waits its turn). */
  private startQueued(): void {
    const { slots, clock } = this.parts;
    while (slots.free() > 0 && this.queue.size > 0) {
      const entry = this.queue.takeFirst(
        (candidate) =>
          !this.flights.inFlight.has(candidate.row.id) &&
          slots.canStart(candidate.row.workflow_id, candidate.plan.settings.concurrencyLimit),
      );
      if (!entry) return;
      slots.take(entry.row.workflow_id, entry.plan.settings.concurrencyLimit);
      const now = clock.now();
      this.flights.launch(entry, { status: 'running', run_at: null, updated_at: now, started_at: now });
    }
    this.admission.release();
  }

  /** Alone, a run that failed here is always this process's to take up again. */
  ownsAfterFailure(): boolean {
    return true;
  }

  /** A slot is free: parked runs that became due first, then queued starts, then pending executions the queue does not hold, if any may exist. */
  flightEnded(row: ExecutionRow): void {
    this.flights.resumeWaitingForSlots();
    this.startQueued();
    if (this.mayHavePending) void this.runDue().catch((error: unknown) => this.parts.onError(error, row.id));
  }

  /** Resumes an execution from the database if it waits and is due (a child's end made it so). */
  async wake(executionId: string): Promise<void> {
    const row = await findExecution(this.parts.db, executionId);
    if (!row || row.status !== 'waiting' || row.run_at === null || row.run_at > this.parts.clock.now()) return;
    await this.tryDispatch(row);
  }

  stopTaking(): void {}

  clear(): void {
    this.queue.clear();
  }

  async close(): Promise<void> {}
}
