import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import { abandonExpiredRestores } from '../../store/store-restores.js';

export interface SweepBatch {
  storeId: string;
  table: 'store_rows' | 'store_deletions';
  deleted: number;
}

export interface StoreSweeperOptions {
  /** Rows deleted per transaction. */
  batchSize?: number;
  /** How often to look for deleted stores besides the wake-ups (another process may delete one). */
  intervalMs?: number;
  onError?: (error: unknown) => void;
  /** Called after each batch has committed, before the sweeper yields. */
  onBatch?: (batch: SweepBatch) => void | Promise<void>;
  /** The clock restore leases are written with (dump/store-restore.ts); the system's by default. */
  clock?: Clock;
}

/**
 * Removes the rows and tombstones of deleted stores, then the store rows themselves. A deleted
 * store is already invisible (`deleted_at` set), so nothing waits for this: it deletes in
 * batches of 1,000 rows, each its own short transaction, and yields between them, so writers
 * of other stores (and SQLite's single connection) are never held for more than one batch.
 * Started by `serve`, it sweeps at once (resuming what a stopped process left), whenever this
 * process deletes a store, and every minute. Each sweep first turns restores whose lease ran out
 * (their process died, or their client went quiet) into deleted stores.
 */
export class StoreSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private again = false;
  private halted = false;
  private started = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: StoreSweeperOptions = {},
  ) {}

  private get batchSize(): number {
    return this.options.batchSize ?? 1000;
  }

  /** Sweeps every deleted store; returns the rows and tombstones deleted. */
  async runOnce(): Promise<number> {
    let deleted = 0;
    await abandonExpiredRestores(this.db, (this.options.clock ?? systemClock).now());
    while (!this.halted) {
      const stores = await this.db
        .selectFrom('stores')
        .select('id')
        .where('deleted_at', 'is not', null)
        .orderBy('deleted_at')
        .limit(10)
        .execute();
      if (stores.length === 0) break;
      for (const store of stores) {
        if (this.halted) break;
        deleted += await this.sweep(store.id);
      }
    }
    return deleted;
  }

  private async sweep(storeId: string): Promise<number> {
    let deleted = 0;
    for (const table of ['store_rows', 'store_deletions'] as const) {
      while (!this.halted) {
        const count = await this.deleteBatch(table, storeId);
        deleted += count;
        if (count > 0) await this.options.onBatch?.({ storeId, table, deleted: count });
        if (count < this.batchSize) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    if (!this.halted) await this.db.deleteFrom('stores').where('id', '=', storeId).where('deleted_at', 'is not', null).execute();
    return deleted;
  }

  private async deleteBatch(table: 'store_rows' | 'store_deletions', storeId: string): Promise<number> {
    const batch = this.db.selectFrom(table).select('key').where('store_id', '=', storeId).limit(this.batchSize);
    const result = await this.db.deleteFrom(table).where('store_id', '=', storeId).where('key', 'in', batch).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.halted = false;
    this.wake();
    this.timer = setInterval(() => this.wake(), this.options.intervalMs ?? 60_000);
    this.timer.unref?.();
  }

  /** A store was deleted: sweep soon (at once, or after the sweep under way). */
  wake(): void {
    if (!this.started || this.halted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.runOnce()
      .catch((error: unknown) => {
        this.options.onError?.(error);
        return 0;
      })
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves once no sweep is running or queued. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops after the batch in progress; a later start resumes where it stopped. */
  async stop(): Promise<void> {
    this.halted = true;
    this.started = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
