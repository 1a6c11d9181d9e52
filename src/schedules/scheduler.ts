import type { Kysely } from 'kysely';
import type { DialectName } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';
import type { Engine, StartRun } from '../engine/engine.js';
import { BackgroundLoop } from '../lib/background-loop.js';
import type { Clock } from '../lib/clock.js';
import { decideFire, type FireDecision } from '../steps/schedule/schedule-times.js';
import { claimSchedules, listDueSchedules, nextScheduleAt, type ScheduleRow } from '../store/schedule-repository.js';
import { msTimestamp, rowIntervalMs, rowTiming, timestampMs } from '../services/schedules/schedule-sync.js';

export interface SchedulerOptions {
  db: Kysely<Database>;
  dialect: DialectName;
  engine: Engine;
  clock: Clock;
  /**
   * Due schedules fired per commit. 500 keeps one commit near 50 ms on SQLite (executions and
   * their trigger rows written with the schedule updates) while 10,000 schedules due at the same
   * second take 20 commits: see bench/results/schedules.md.
   */
  batchSize?: number;
  /** The backstop look for schedules written by other processes (ms; default 1000). */
  pollMs?: number;
  /** Real timers (serve); tests with a manual clock call `runDue()`. */
  timers?: boolean;
  onError?: (error: unknown) => void;
  /** Told how many schedules a pass claimed (logs). */
  onFired?: (claimed: number) => void;
}

/** What one pass did, for tests and logs. */
export interface FireCounts {
  fired: number;
  skipped: number;
}

/**
 * Fires schedules (the `schedule` trigger) from their durable next fire time. Each batch of due
 * rows is claimed, fired and advanced in ONE commit with the executions it creates (engine
 * `runSelected`): a crash before the commit fires nothing and leaves the rows due, after it the
 * rows have moved on, so no fire time is started twice by restarts or by several schedulers on
 * one PostgreSQL (rows claimed FOR UPDATE SKIP LOCKED, compared with what was read). It sleeps
 * until the earliest stored fire time (a timer), with a poll as the backstop for rows written
 * by other processes. Runs in the processes that run executions (roles `all` and `worker`).
 */
export class Scheduler {
  private readonly loop: BackgroundLoop;
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  /** Totals since start, for tests and the benchmark. */
  readonly counts: FireCounts = { fired: 0, skipped: 0 };

  constructor(private readonly options: SchedulerOptions) {
    this.loop = new BackgroundLoop([{ name: 'schedules', run: async (signal) => this.runTask(signal) }], {
      pollMs: options.pollMs ?? 1000,
      onError: (error) => options.onError?.(error),
    });
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.loop.stop();
  }

  /** Schedules changed here (an activation): look again, and re-arm the timer. */
  poke(): void {
    if (this.started) this.loop.poke();
  }

  /** Fires everything due now, batch after batch, until nothing is due (tests and the CLI). */
  async runDue(): Promise<FireCounts> {
    const total: FireCounts = { fired: 0, skipped: 0 };
    for (;;) {
      const pass = await this.fireBatch();
      total.fired += pass.fired;
      total.skipped += pass.skipped;
      if (pass.claimed === 0) return total;
    }
  }

  private async runTask(signal: AbortSignal): Promise<number> {
    let handled = 0;
    while (!signal.aborted) {
      const pass = await this.fireBatch();
      handled += pass.claimed;
      if (pass.claimed === 0) break;
    }
    await this.armTimer();
    if (handled > 0) this.options.onFired?.(handled);
    // 0 ends the loop's pass: the batches above already ran until nothing was due.
    return 0;
  }

  /** Sleeps until the earliest stored fire time (the poll covers rows added elsewhere). */
  private async armTimer(): Promise<void> {
    if (!this.options.timers || !this.started) return;
    const next = await nextScheduleAt(this.options.db);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (next === null) return;
    const delay = Math.max(0, timestampMs(next) - this.options.clock.nowMs());
    // The poll looks at least this often anyway; a long timer only adds nothing.
    if (delay >= (this.options.pollMs ?? 1000)) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.loop.poke();
    }, delay);
    this.timer.unref?.();
  }

  /**
   * Rows whose fire must be dropped: their snapshot cannot be planned (missing; reported once per
   * pass), or their node is no enabled schedule there. Activation writes rows for enabled nodes
   * only, so the second is a row from before that rule: it moves on without starting anything.
   */
  private async unfireable(rows: ScheduleRow[]): Promise<Set<string>> {
    const ids = new Set(rows.map((row) => row.snapshot_id));
    const plans = await this.options.engine.plansOf(ids);
    const failed = new Set([...ids].filter((id) => !plans.has(id)));
    if (failed.size > 0) this.options.onError?.(new Error(`schedules name snapshots that do not exist: ${[...failed].join(', ')}`));
    const dropped = new Set<string>();
    for (const row of rows) {
      const node = plans.get(row.snapshot_id)?.nodes.get(row.node_id);
      if (!node || node.type !== 'schedule' || node.disabled) dropped.add(row.id);
    }
    return dropped;
  }

  /**
   * One batch: reads due rows, decides each (on time, or missed and then catch_up), and in one
   * commit claims them, creates the executions of those that fire and advances every claimed
   * row (a schedule with no future time is deleted).
   */
  private async fireBatch(): Promise<{ claimed: number; fired: number; skipped: number }> {
    const { db, dialect, engine, clock } = this.options;
    const nowMs = clock.nowMs();
    const due = await listDueSchedules(db, msTimestamp(nowMs), this.options.batchSize ?? 500);
    if (due.length === 0) return { claimed: 0, fired: 0, skipped: 0 };
    const firedAt = clock.now();
    const unfireable = await this.unfireable(due);
    const decisions = new Map<string, FireDecision>();
    const starts: StartRun[] = [];
    const startRows: ScheduleRow[] = [];
    for (const row of due) {
      const decision = decideFire(rowTiming(row), row.catch_up, timestampMs(row.next_fire_at), nowMs, timestampMs(row.anchor_at));
      // A snapshot that cannot be planned would fail every pass: its fire is dropped and the row moves on.
      if (unfireable.has(row.id)) decision.fire = false;
      decisions.set(row.id, decision);
      if (!decision.fire) continue;
      starts.push({
        workspaceId: row.workspace_id,
        workflowId: row.workflow_id,
        snapshotId: row.snapshot_id,
        userId: null,
        trigger: scheduleTrigger(row, firedAt, decision.missed),
        firedRoots: [row.node_id],
      });
      startRows.push(row);
    }
    let claimedCount = 0;
    let skipped = 0;
    const created = await engine.runSelected(starts, async (trx) => {
      const claimed = await claimSchedules(trx, dialect, due);
      claimedCount = claimed.size;
      skipped = 0;
      // One UPDATE per distinct next time (10,000 schedules on one cron share it), not one per row.
      const advances = new Map<string, string[]>();
      const ended: string[] = [];
      for (const row of due) {
        if (!claimed.has(row.id)) continue;
        const decision = decisions.get(row.id)!;
        if (!decision.fire) skipped += 1;
        if (decision.nextMs === null) {
          ended.push(row.id);
          continue;
        }
        const key = `${msTimestamp(decision.nextMs)} ${decision.fire ? 'fired' : 'skipped'}`;
        const ids = advances.get(key);
        if (ids) ids.push(row.id);
        else advances.set(key, [row.id]);
      }
      if (ended.length > 0) await trx.deleteFrom('schedules').where('id', 'in', ended).execute();
      for (const [key, ids] of advances) {
        const [next, outcome] = key.split(' ');
        await trx
          .updateTable('schedules')
          .set({ next_fire_at: next!, ...(outcome === 'fired' ? { last_fired_at: firedAt } : {}), updated_at: firedAt })
          .where('id', 'in', ids)
          .execute();
      }
      const chosen = new Set<number>();
      startRows.forEach((row, index) => {
        if (claimed.has(row.id)) chosen.add(index);
      });
      return chosen;
    });
    this.counts.fired += created.length;
    this.counts.skipped += skipped;
    return { claimed: claimedCount, fired: created.length, skipped };
  }
}

/**
 * The schedule step's output, shaped as every platform trigger's (DESIGN.md, "platform trigger
 * output"): `payload` the normalized fields, `event` what fired it. A schedule has no provider,
 * so its event is the scheduler's own record of the fire: which schedule, with which timing.
 */
export function scheduleTrigger(row: ScheduleRow, firedAt: string, missed: boolean) {
  return {
    payload: { scheduled_at: row.next_fire_at, fired_at: firedAt, missed },
    event: {
      type: 'schedule.fired',
      schedule_id: row.id,
      node_id: row.node_id,
      cron: row.cron,
      timezone: row.timezone,
      interval_ms: rowIntervalMs(row),
      catch_up: row.catch_up,
    },
  };
}
