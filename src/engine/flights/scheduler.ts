import type { Transaction } from 'kysely';
import type { Database, ExecutionStatus } from '../../db/schema.js';
import type { RunCoordination } from '../commit/run-coordination.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';
import type { ExecutionIdentity } from '../run/execution-start.js';
import type { GraphPlan } from '../run/graph-plan.js';
import type { QueuedStart } from './parked-runs.js';

/** A new execution as its creator learns of it. */
export interface Started {
  execution_id: string;
  status: ExecutionStatus;
}

export interface AdmitOptions {
  /** A write committed in the same transaction as the execution (a webhook's idempotency key). */
  alsoWrite?: (trx: Transaction<Database>, executionId: string) => Promise<void>;
  /**
   * Its caller waits for the run's answer, not for its creation: alone, the first step need not
   * wait for the creating commit (its own rows commit after it in any case).
   */
  startEarly?: boolean;
  /** This process holds a caller waiting for its answer: in a cluster the worker sends it here. */
  awaited?: boolean;
}

/**
 * What the engine's runs ask of whoever feeds them (flights.ts): the single-process scheduler
 * (local/) or this process's part in a cluster (cluster/).
 */
export interface FlightHooks {
  /**
   * Whether a run that committed its wait stays parked in memory. Alone, yes: it resumes from
   * there. In a cluster the written wait gave up the lease, and another worker may continue the
   * run, so a copy kept here would be stale.
   */
  readonly parksWrittenWaits: boolean;
  /** What every commit of a run does with the other processes (leases, notifications); undefined alone. */
  readonly coordination: RunCoordination | undefined;
  /** Whether a run that failed here may be taken up again by this process (in a cluster: still under its lease). */
  ownsAfterFailure(row: ExecutionRow): boolean;
  /** A flight ended and gave its slot back (not during a stop). */
  flightEnded(row: ExecutionRow): void;
  /** An execution may be due in the database (a child's end made its parent so): run it. A pass to wait for, if any. */
  wake(executionId: string): Promise<void> | undefined;
}

/**
 * How executions are admitted, queued and found due: one process owning every execution
 * (local/local-scheduler.ts, SQLite) or several sharing PostgreSQL (cluster/cluster-scheduler.ts).
 * engine.ts holds one and calls it in this order at a stop: `stopTaking`, then (the grace over,
 * the runs halted) `clear`, then `close`.
 */
export interface Scheduler extends FlightHooks {
  /** Takes up what a previous process left (alone), or starts claiming (cluster). */
  start(): Promise<void>;
  /** Waits for room before a new top-level run (true: it waited; call `entered` once admitted or failed). */
  enter(timeoutMs?: number): Promise<boolean>;
  entered(): void;
  /** Commits a new execution with its first step rows and starts it where it may. */
  admit(identity: ExecutionIdentity, plan: GraphPlan, steps: StepRow[], options: AdmitOptions): Promise<Started>;
  /** The process an observed start's answers go to (a cluster's worker sends them there); null alone. */
  readonly waiterId: string | null;
  /** A new `pending` execution in a commit of several (runMany). */
  admitPending(trx: Transaction<Database>, row: ExecutionRow, steps: StepRow[]): Promise<void>;
  /** Executions just committed `pending`. */
  startPending(entries: QueuedStart[]): void;
  /** In the commit that cancels an execution: what other processes must hear. */
  announceCancel(trx: Transaction<Database>, execution: ExecutionRow): Promise<void>;
  /** After that commit: it must not start from anything this scheduler keeps. */
  forget(executionId: string): void;
  /** Runs every due pending or waiting execution (the timer calls this; so do tests). */
  runDue(): Promise<void>;
  /** Passes under way that `idle()` waits for. */
  passes(): Promise<unknown>[];
  /** A stop begins: nothing new is taken. */
  stopTaking(): void;
  /** The runs are halted: what is kept for them goes. */
  clear(): void;
  /** Last: what still runs here is given up (`unfinished`, in a cluster to the other workers). */
  close(unfinished: string[]): Promise<void>;
}
