import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

export type BatchedWrite = (trx: Transaction<Database>) => Promise<void>;
/** Locks rows a batch is about to write, all at once and in one order (cluster-store.ts `lockExecutions`). */
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
   * other's rows (a child's end wakes a parent another worker may be writing).
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly lockRows?: RowLocker,
  ) {}

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
      await this.db.transaction().execute(async (trx) => {
        if (this.lockRows) await this.lockRows(trx, batch.flatMap((item) => item.locks));
        for (const item of batch) await item.write(trx);
      });
      this.commits += 1;
      for (const item of batch) item.resolve();
    } catch (error) {
      // One bad write must not sink the others: retry them one transaction each.
      for (const item of batch) {
        try {
          await this.db.transaction().execute(async (trx) => {
            if (this.lockRows) await this.lockRows(trx, [...item.locks]);
            await item.write(trx);
          });
          this.commits += 1;
          item.resolve();
        } catch (own) {
          item.reject(own ?? error);
        }
      }
    }
  }
}
