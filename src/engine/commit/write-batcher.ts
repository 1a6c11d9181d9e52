import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { attachBuffer, BufferingScope, TransactionBuffer, type BufferedTable } from '../../db/transaction-buffer.js';

/** The tables a group commit on PostgreSQL buffers, in the order their rows go in (steps reference executions). */
const BUFFERED_TABLES: readonly BufferedTable[] = ['executions', 'execution_steps'];

export type BatchedWrite = (trx: Transaction<Database>) => Promise<void>;
/** Locks rows a batch is about to write, all at once and in one order (cluster/cluster-store.ts `lockExecutions`). */
export type RowLocker = (trx: Transaction<Database>, ids: string[]) => Promise<void>;

interface Queued {
  write: BatchedWrite;
  /** Executions the write changes (its own, a parent it wakes): locked up front when a locker is set. */
  locks: readonly string[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: writes queued by any number of executions during one tick are committed in one
 * transaction, and every writer's promise settles when its write is durable. A step's result is
 * therefore persisted before the steps after it start, while a busy engine pays one commit for
 * many executions' steps (DESIGN.md principle 2: at most 3 commits per 3-step execution).
 */
export class WriteBatcher {
  private queue: Queued[] = [];
  private scheduled = false;
  private flushing: Promise<void> = Promise.resolve();
  /** Commits made, for the benchmark and tests. */
  commits = 0;

  /**
   * `lockRows`: with several processes on one database (PostgreSQL), each batch first locks the
   * executions its writes name, in id order, so batches of two workers never deadlock on each
   * other's rows (a child's end wakes a parent another worker may be writing). There, too, the
   * rows and notifications of all the batch's writes are sent together at its end
   * (transaction-buffer.ts): a statement is a round trip to the server.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly lockRows?: RowLocker,
  ) {}

  /**
   * Runs writes in one transaction. On PostgreSQL (`lockRows` set) rows are locked up front, and
   * the rows, gathered updates and notifications of all the writes go out at the end together
   * (transaction-buffer.ts). First, unless a write wakes a parent, the writes run against a
   * scope that only buffers: when none ran a statement of its own (the common case: a new
   * execution, a step's result, a run's end), the buffer is one statement, with no BEGIN and
   * COMMIT around it; else the writes run again in a transaction.
   *
   * That statement locks its rows in no set order, which is safe here: each of its executions
   * is this worker's own (held under its lease), so no other worker writes them, and another
   * process's cancellation locks at most a run and its parent, which are both in it only when a
   * parent commits its wait in the same instant; PostgreSQL breaks such a deadlock after its
   * deadlock_timeout (1 s) and the group commit retries the writes one by one.
   */
  private async commit(items: readonly Queued[]): Promise<void> {
    const { lockRows } = this;
    if (!lockRows) {
      await this.db.transaction().execute(async (trx) => {
        for (const item of items) await item.write(trx);
      });
      return;
    }
    if (items.every((item) => item.locks.length <= 1) && (await this.commitAlone(items))) return;
    const locks = new Set(items.flatMap((item) => item.locks));
    await this.db.transaction().execute(async (trx) => {
      const buffer = new TransactionBuffer(BUFFERED_TABLES);
      attachBuffer(trx, buffer);
      // One row cannot deadlock with anything (its first write locks it): no statement for it.
      if (locks.size > 1) await lockRows(trx, [...locks]);
      for (const item of items) await item.write(trx);
      await buffer.flushAll(trx);
    });
  }

  /** The writes as one statement, if none of them runs a statement of its own; false: nothing was written. */
  private async commitAlone(items: readonly Queued[]): Promise<boolean> {
    const scope = new BufferingScope(this.db, BUFFERED_TABLES);
    try {
      for (const item of items) {
        await item.write(scope.db);
        if (scope.refused) return false;
      }
    } catch (error) {
      if (scope.refused) return false;
      throw error;
    }
    await scope.buffer.flushAlone(this.db);
    return true;
  }

  write(write: BatchedWrite, locks: readonly string[] = []): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, locks, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flushing = this.flushing.then(() => this.flush());
        });
      }
    });
  }

  /** Waits for every queued write. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.scheduled) {
      await new Promise((resolve) => setImmediate(resolve));
      await this.flushing;
    }
    await this.flushing;
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    try {
      await this.commit(batch);
      this.commits += 1;
      for (const item of batch) item.resolve();
    } catch (error) {
      // One bad write must not sink the others: retry them one transaction each.
      for (const item of batch) {
        try {
          await this.commit([item]);
          this.commits += 1;
          item.resolve();
        } catch (own) {
          item.reject(own ?? error);
        }
      }
    }
  }
}
