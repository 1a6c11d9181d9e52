import { Cron } from 'croner';

export const SCHEDULE_CATCH_UP = ['skip', 'run_once'] as const;
export type ScheduleCatchUp = (typeof SCHEDULE_CATCH_UP)[number];

/** A schedule node's timing, as stored in its `schedules` row. */
export type ScheduleTiming = { cron: string; timezone: string } | { intervalMs: number };

export const DEFAULT_TIMEZONE = 'UTC';

/**
 * How late a fire may be and still count as on time rather than missed (catch_up applies).
 * A minute covers a busy scheduler and a quick restart; an outage longer than that, or one that
 * spans the next fire time too, is "missed".
 */
export const ON_TIME_GRACE_MS = 60_000;

/** Minute, hour, day of month, month, day of week, optionally preceded by seconds. */
export function cronFieldCount(expression: string): number {
  return expression.trim().split(/\s+/).length;
}

/** Why a cron expression cannot be used, or null when it can. */
export function cronProblem(expression: string): string | null {
  const fields = cronFieldCount(expression);
  if (expression.trim() === '' || (fields !== 5 && fields !== 6)) {
    return `config.cron must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first); "${expression}" has ${expression.trim() === '' ? 0 : fields}.`;
  }
  try {
    if (new Cron(expression, { paused: true, mode: '5-or-6-parts' }).nextRun() === null) {
      return `config.cron never fires: no date matches "${expression}".`;
    }
  } catch (error) {
    // croner's messages name the field ("Invalid value for minute: 61"); its prefix does not help.
    const message = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, '') : String(error);
    return `config.cron is not a valid cron expression: ${message}.`.replace(/\.\.$/, '.');
  }
  return null;
}

/** Whether `timezone` is an IANA zone name the runtime knows (Intl throws a RangeError otherwise). */
export function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** Compiled patterns by `timezone\ncron`: 10,000 schedules share a handful of patterns. */
const compiled = new Map<string, Cron>();

function cronOf(expression: string, timezone: string): Cron {
  const key = `${timezone}\n${expression}`;
  let cron = compiled.get(key);
  if (!cron) {
    cron = new Cron(expression, { paused: true, mode: '5-or-6-parts', timezone });
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, cron);
  }
  return cron;
}

/**
 * The first fire time strictly after `afterMs`, in epoch milliseconds, or null when the pattern
 * never fires again (a date that does not exist, such as 31 February). Cron times are read in
 * the schedule's time zone, so DST is the zone's: a time skipped by spring forward fires at the
 * first valid time after the gap, a time repeated by fall back fires once (croner follows
 * Vixie cron here). Intervals count from `anchorMs` (the activation) on a fixed grid, so a
 * late fire does not shift the ones after it.
 */
export function nextFireAfter(timing: ScheduleTiming, afterMs: number, anchorMs: number): number | null {
  if ('intervalMs' in timing) {
    const step = timing.intervalMs;
    if (afterMs < anchorMs) return anchorMs + step;
    return anchorMs + (Math.floor((afterMs - anchorMs) / step) + 1) * step;
  }
  const key = `${timing.timezone}\n${timing.cron}\n${afterMs}`;
  const known = nextTimes.get(key);
  if (known !== undefined) return known;
  const next = cronOf(timing.cron, timing.timezone).nextRun(new Date(afterMs));
  const result = next === null ? null : next.getTime();
  if (nextTimes.size >= 10_000) nextTimes.clear();
  nextTimes.set(key, result);
  return result;
}

/**
 * Next times already computed, by zone, pattern and instant. croner's `nextRun` in a time zone
 * costs 50-370 us (measured on the shared 2-core machine), and schedules due together mostly
 * share a pattern and a fire time: 10,000 schedules on `* * * * *` then cost one call a minute
 * instead of 20,000 (seconds of CPU; bench/results/schedules.md).
 */
const nextTimes = new Map<string, number | null>();

/** What to do with a due schedule whose stored fire time is `scheduledMs`, at `nowMs`. */
export interface FireDecision {
  /** Start an execution for `scheduledMs`. */
  fire: boolean;
  /** The next stored fire time (null: the schedule never fires again). */
  nextMs: number | null;
  /** The fire was late enough to count as missed (catch_up decided). */
  missed: boolean;
}

/**
 * On time (late by at most ON_TIME_GRACE_MS and the following fire not yet due): fire, and the
 * next time is the one after it. Missed (down or stalled longer): `skip` fires nothing,
 * `run_once` fires one execution for the whole missed window; either way the next time is the
 * first one after now, so no burst of old fires follows a restart.
 */
export function decideFire(
  timing: ScheduleTiming,
  catchUp: ScheduleCatchUp,
  scheduledMs: number,
  nowMs: number,
  anchorMs: number,
): FireDecision {
  const following = nextFireAfter(timing, scheduledMs, anchorMs);
  const onTime = nowMs - scheduledMs <= ON_TIME_GRACE_MS && (following === null || following > nowMs);
  if (onTime) return { fire: true, nextMs: following, missed: false };
  return { fire: catchUp === 'run_once', nextMs: nextFireAfter(timing, nowMs, anchorMs), missed: true };
}
