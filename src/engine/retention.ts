import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { formatMicros } from '../lib/clock.js';
import { TERMINAL_EXECUTION_STATUSES } from './statuses.js';
import { pruneDeliveries } from '../store/webhook-repository.js';
import { pruneStoreDeletions } from '../store/store-row-repository.js';
import { deletePlatformEventsBefore } from '../store/platform-event-repository.js';

/** How long a webhook delivery's idempotency key is remembered (docs/webhooks.md). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * How long a platform delivery's dedupe key is kept (docs/triggers.md). Providers redeliver for
 * hours at most (Slack about an hour, Mailgun 8 hours); a week leaves room for a provider's
 * outage backlog while the table stays a few days of events.
 */
export const PLATFORM_DEDUPE_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Deletes finished executions (and, by cascade, their steps) that ended before the cutoff, in
 * batches: each batch is its own short transaction and the loop yields between batches, so a
 * large backlog never holds the database (or SQLite's single writer) long enough to stall the
 * engine. 500 ids a batch keeps each transaction to a few milliseconds here.
 */
export async function pruneExecutions(db: Kysely<Database>, cutoffIso: string, options: { batchSize?: number } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 500;
  let deleted = 0;
  while (true) {
    const ids = (
      await db
        .selectFrom('executions')
        .select('id')
        .where('status', 'in', TERMINAL_EXECUTION_STATUSES)
        .where('finished_at', '<', cutoffIso)
        .orderBy('finished_at')
        .limit(batchSize)
        .execute()
    ).map((row) => row.id);
    if (ids.length === 0) return deleted;
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('approval_decisions').where('execution_id', 'in', ids).execute();
      await trx.deleteFrom('execution_steps').where('workflow_execution_id', 'in', ids).execute();
      await trx.deleteFrom('executions').where('id', 'in', ids).execute();
    });
    deleted += ids.length;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Prunes on start and then every `intervalMs` (hourly by default) while running. */
export class RetentionPruner {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly retentionDays: number,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly intervalMs = 3_600_000,
  ) {}

  /** The cutoff for now: finished executions older than this are deleted. */
  cutoff(): string {
    return formatMicros((this.clock.nowMs() - this.retentionDays * 86_400_000) * 1000);
  }

  /**
   * Prunes old executions and store tombstones (unless kept forever: the deletions feed keeps
   * a deleted key as long as executions are kept) and webhook idempotency keys past their 24
   * hours, and platform dedupe keys past their week. Returns the executions deleted.
   */
  async runOnce(): Promise<number> {
    await pruneDeliveries(this.db, formatMicros((this.clock.nowMs() - IDEMPOTENCY_WINDOW_MS) * 1000));
    await deletePlatformEventsBefore(this.db, formatMicros((this.clock.nowMs() - PLATFORM_DEDUPE_WINDOW_MS) * 1000));
    if (this.retentionDays === 0) return 0;
    const cutoff = this.cutoff();
    const executions = await pruneExecutions(this.db, cutoff);
    await pruneStoreDeletions(this.db, cutoff);
    return executions;
  }

  start(): void {
    if (this.timer) return;
    const tick = () => void this.runOnce().catch(this.onError);
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
