import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { parseTimestampMicros } from '../../lib/clock.js';
import { listStepsOfMany, type ExecutionRow, type StepRow } from '../execution-store.js';
import type { EngineParts } from '../flights/engine-parts.js';
import type { Flights } from '../flights/flights.js';
import type { ParkedRun } from '../flights/parked-runs.js';
import type { AdmitOptions, Scheduler, Started } from '../flights/scheduler.js';
import { newExecutionRow, type ExecutionIdentity } from '../run/execution-start.js';
import type { GraphPlan } from '../run/graph-plan.js';
import { Cluster, type ClusterHost, type ClusterSettings } from './cluster.js';
import type { Claimed } from './cluster-store.js';

/**
 * This process's part when several share PostgreSQL: new executions are committed `pending`
 * (or handed to a worker by an API process, hand-off.ts) and run by whichever worker claims
 * them under a lease (cluster.ts); a freed slot, a due time or a child's end asks for a claim.
 */
export class ClusterScheduler implements Scheduler {
  readonly parksWrittenWaits = false;
  readonly cluster: Cluster;

  constructor(
    private readonly parts: EngineParts,
    private readonly flights: Flights,
    settings: ClusterSettings,
    /** Polls and lease renewals on timers (tests with a manual clock turn them off). */
    private readonly timers: boolean,
  ) {
    this.cluster = new Cluster(parts.db, parts.clock, settings, this.host());
  }

  get coordination(): Cluster {
    return this.cluster;
  }

  get waiterId(): string {
    return this.cluster.processId;
  }

  /** Executions left running belong to their workers' leases; expired ones are claimed like any work. */
  async start(): Promise<void> {
    await this.cluster.start(this.timers);
    await this.cluster.requestClaim(true);
    await this.parts.timer.schedule();
  }

  /** No admission wait: nothing queues in this process (the workers' claims take what the limits allow). */
  async enter(): Promise<boolean> {
    return false;
  }

  entered(): void {}

  /**
   * A new execution is committed `pending` with a notification for the workers; the one that
   * claims it runs it (this process first, when it runs steps). An API process hands it to a
   * worker in the same commit instead, where the limits allow (hand-off.ts). `awaited`: this
   * process holds a caller waiting for its answer, which the worker sends to it.
   */
  async admit(identity: ExecutionIdentity, plan: GraphPlan, steps: StepRow[], { alsoWrite, awaited }: AdmitOptions): Promise<Started> {
    const { cluster } = this;
    const waiter = awaited === true ? cluster.processId : null;
    const row = newExecutionRow(identity, 'pending', steps.length, this.parts.clock.now(), plan.settings.concurrencyLimit, waiter);
    await this.parts.batcher.write(async (trx) => {
      await cluster.admit(trx, row, steps);
      if (alsoWrite) await alsoWrite(trx, row.id);
    });
    void cluster.requestClaim(true);
    return { execution_id: row.id, status: 'pending' };
  }

  /** Handed to a worker or announced (Cluster.admit). */
  admitPending(trx: Transaction<Database>, row: ExecutionRow, steps: StepRow[]): Promise<void> {
    return this.cluster.admit(trx, row, steps);
  }

  /** The workers claim them. */
  startPending(): void {
    void this.cluster.requestClaim(true);
  }

  /** Its worker stops it, its waiter (elsewhere) is told, and a parent it wakes is work for some worker. */
  async announceCancel(trx: Transaction<Database>, execution: ExecutionRow): Promise<void> {
    await this.cluster.announceCancel(trx, execution);
    if (execution.parent_execution_id !== null) await this.cluster.announceWork(trx);
  }

  forget(): void {}

  runDue(): Promise<void> {
    return this.cluster.requestClaim(true).then(() => this.parts.timer.schedule());
  }

  passes(): Promise<unknown>[] {
    const passing = this.cluster.passing;
    return passing ? [passing] : [];
  }

  /** Only while its lease is still this worker's: otherwise the worker that took it over has it. */
  ownsAfterFailure(row: ExecutionRow): boolean {
    return row.lease_owner === this.cluster.processId;
  }

  flightEnded(): void {
    void this.cluster.requestClaim();
  }

  /** Due in the database (the child's commit made it so): whichever worker claims it runs it. */
  wake(): undefined {
    void this.cluster.requestClaim(true);
    return undefined;
  }

  stopTaking(): void {
    this.cluster.stopClaiming();
  }

  clear(): void {}

  /** What still runs here is released for another worker to continue at once. */
  async close(unfinished: string[]): Promise<void> {
    await this.cluster.release(unfinished);
    await this.cluster.stop();
  }

  /** What the cluster asks of this engine. */
  private host(): ClusterHost {
    const { flights, parts } = this;
    return {
      freeSlots: () => (flights.stopped ? 0 : parts.slots.free()),
      capacity: () => parts.slots.size,
      dispatchClaimed: (claimed) => this.dispatchClaimed(claimed),
      held: () => [...flights.inFlight.keys(), ...flights.parked.deferred().map((parked) => parked.row.id)],
      leaseLost: (id) => {
        parts.metrics.leaseExpired();
        flights.stopLocally(id);
      },
      cancelled: (id) => flights.stopLocally(id),
      answer: (message) => parts.answers.receive(message),
      reconnected: () => parts.answers.recheck(),
      dueAt: () => void parts.timer.schedule().catch((error: unknown) => parts.onError(error, '')),
      onError: (error) => parts.onError(error, ''),
    };
  }

  /**
   * Executions claimed by this worker in one pass: their slots are taken now; the step rows of
   * new ones came with the claim, those of the others not parked here are read in one query for
   * the batch (a query per execution was one of the round trips each delivery cost,
   * bench/results/cluster.md); each run starts once its plan and rows are loaded.
   */
  private dispatchClaimed(batch: Claimed[]): void {
    const { db, clock, slots, metrics, plans } = this.parts;
    const toLoad: string[] = [];
    const parkedRuns = new Map<string, ParkedRun>();
    for (const { row, takeover, was, dueAt, steps } of batch) {
      slots.take(row.workflow_id, null);
      if (takeover) metrics.takeover();
      if (was === 'pending') metrics.executionStarted();
      if (dueAt !== null)
        metrics.claimed(Math.max(0, ((parseTimestampMicros(clock.now()) ?? 0) - (parseTimestampMicros(dueAt) ?? 0)) / 1000));
      const parked = this.flights.parked.take(row.id);
      if (parked) parkedRuns.set(row.id, parked);
      else if (steps === null) toLoad.push(row.id);
    }
    const loading = toLoad.length > 0 ? listStepsOfMany(db, toLoad) : null;
    // Settled here too: a batch whose every run failed before awaiting it must not leave it unhandled.
    loading?.catch(() => {});
    for (const { row, steps: claimedSteps } of batch) {
      const parked = parkedRuns.get(row.id);
      if (parked) {
        this.flights.continueParked(parked, {});
        continue;
      }
      this.flights.resume(
        row,
        async () => {
          const plan = await plans.load(row.workflow_snapshot_id);
          return { plan, steps: claimedSteps ?? (await loading!).get(row.id) ?? [] };
        },
        {},
      );
    }
  }
}
