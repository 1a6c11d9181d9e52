import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

export type BatchedWrite = (trx: Transaction<Database>) => Promise<void>;

/**
 * Group commit: writes queued by any number of executions during one tick are committed in one
 * transaction, and every writer's promise settles when its write is durable. A step's result is
 * therefore persisted before the steps after it start, while a busy engine pays one commit for
 * many executions' steps (DESIGN.md principle 2: at most 3 commits per 3-step execution).
 */
export class WriteBatcher {
  private queue: { write: BatchedWrite; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private scheduled = false;
  private flushing: Promise<void> = Promise.resolve();
  /** Commits made, for the benchmark and tests. */
  commits = 0;

  constructor(private readonly db: Kysely<Database>) {}

  write(write: BatchedWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
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
        for (const item of batch) await item.write(trx);
      });
      this.commits += 1;
      for (const item of batch) item.resolve();
    } catch (error) {
      // One bad write must not sink the others: retry them one transaction each.
      for (const item of batch) {
        try {
          await this.db.transaction().execute((trx) => item.write(trx));
          this.commits += 1;
          item.resolve();
        } catch (own) {
          item.reject(own ?? error);
        }
      }
    }
  }
}
