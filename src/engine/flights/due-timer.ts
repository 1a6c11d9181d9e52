import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { parseTimestampMicros, type Clock } from '../../lib/clock.js';
import { nextDueAt } from '../execution-store.js';

/**
 * One timer for the earliest due wait or retry in the database (`run_at`): when it fires, the
 * scheduler runs what is due. Each wait that is committed, and each due pass, sets it again.
 * Off (`enabled` false) for tests with a manual clock, which call `runDue()` themselves.
 */
export class DueTimer {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly enabled: boolean,
    private readonly due: () => Promise<void>,
    /** The engine is stopped: no timer is set. */
    private readonly stopped: () => boolean,
  ) {}

  async schedule(): Promise<void> {
    if (!this.enabled || this.stopped()) return;
    const next = await nextDueAt(this.db);
    this.clear();
    if (next === null) return;
    const delay = Math.max(0, Math.floor((parseTimestampMicros(next) ?? 0) / 1000) - this.clock.nowMs());
    // Timers longer than ~24 days overflow; a shorter re-check is harmless.
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.due().catch(() => {});
      },
      Math.min(delay, 2 ** 31 - 1),
    );
    this.timer.unref?.();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
