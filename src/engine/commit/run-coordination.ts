import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ExecutionRow } from '../execution-store.js';

/**
 * What a run does in its commits when several processes share the database (cluster.ts); absent
 * on SQLite, where one process owns every execution. Each method runs inside the run's commit.
 */
export interface RunCoordination {
  /**
   * The execution row's part of the commit, before the run's other writes: its changes written
   * only while the execution is still live and this process's (the lease held and renewed unless
   * the changes give it up); otherwise it throws `LeaseLostError` and nothing of the commit may
   * land. A commit of `waiting` on children (`run_at` null) is made due when one of `awaited`
   * already ended (cluster/held-commit.ts says why the order of its reads matters).
   */
  writeExecution(
    trx: Transaction<Database>,
    executionId: string,
    changes: Partial<ExecutionRow>,
    awaited: readonly string[],
  ): Promise<void>;
  /** In a child's final commit: its waiting parent made due, the parent's row locked first (cluster/held-commit.ts). */
  wakeParent(trx: Transaction<Database>, parentId: string, childId: string, nowIso: string): Promise<void>;
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
