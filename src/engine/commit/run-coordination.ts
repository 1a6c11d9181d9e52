import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ExecutionRow } from '../execution-store.js';

/**
 * What a run does in its commits when several processes share the database (cluster.ts); absent
 * on SQLite, where one process owns every execution. Each method runs inside the run's commit.
 */
export interface RunCoordination {
  /**
   * Before the run's writes: whether the execution is still this process's (its lease held); false
   * drops the commit. In a group commit that gathers these checks (cluster-store.ts `gather`) it
   * answers true and the check is made with the batch's others at its end, failing the commit
   * with `LeaseLostError`; so does `updateHeld`.
   */
  holds(trx: Transaction<Database>, executionId: string): Promise<boolean>;
  /**
   * Writes the execution's changes if it is still live and this process's, renewing the lease
   * unless the changes give it up: one statement for the check and the write. False: neither.
   */
  updateHeld(trx: Transaction<Database>, executionId: string, changes: Partial<ExecutionRow>): Promise<boolean>;
  /** Columns of the execution row written when the run stops holding it (it waits): the lease is given up. */
  readonly releaseColumns: Partial<ExecutionRow>;
  /** After the run's writes, what other processes must hear of them. */
  announce(trx: Transaction<Database>, news: RunNews): Promise<void>;
  /** Once that commit is durable: what this process itself acts on (its own claims, its timer). */
  committed(news: RunNews): void;
}

/** What a commit of a run changed that another process may act on. */
export interface RunNews {
  execution: ExecutionRow;
  /** A parent waiting for this execution was made due. */
  wokeParent: boolean;
  /** The run now waits until this time (null: not by time). */
  dueAt: string | null;
  /** A respond step's answer (JSON text), for the process holding the delivery. */
  response: string | null;
  /** The execution ended (`completed`, `failed`): its final status, output and error as written. */
  ended: { status: 'completed' | 'failed'; output: string | null; error: string | null } | null;
}

/** A commit of a run found its lease taken by another worker (after a pause or a partition): the run stops. */
export class LeaseLostError extends Error {
  constructor(readonly executionId: string) {
    super(`execution ${executionId} is no longer held by this worker (its lease expired and another worker claimed it)`);
    this.name = 'LeaseLostError';
  }
}
