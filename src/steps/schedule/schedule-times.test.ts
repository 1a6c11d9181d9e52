import { describe, expect, it } from 'vitest';
import { decideFire, nextFireAfter, type ScheduleTiming } from './schedule-times.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The next `n` fire times after `from`, each computed from the one before. */
function fires(timing: ScheduleTiming, from: string, n: number): (string | null)[] {
  const out: (string | null)[] = [];
  let cursor: number | null = at(from);
  for (let i = 0; i < n && cursor !== null; i++) {
    cursor = nextFireAfter(timing, cursor, at(from));
    out.push(iso(cursor));
  }
  return out;
}

describe('schedule times', () => {
  const berlin = (cron: string): ScheduleTiming => ({ cron, timezone: 'Europe/Berlin' });

  it('fires a daily 02:30 Berlin job at 03:00 local on the spring-forward day (02:30 does not exist)', () => {
    expect(fires(berlin('30 2 * * *'), '2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
  });

  it('fires a daily 02:30 Berlin job once on the fall-back day (02:30 happens twice), at the first occurrence', () => {
    expect(fires(berlin('30 2 * * *'), '2026-10-23T12:00:00Z', 3)).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('keeps 09:00 local across the change: 08:00 UTC before, 07:00 UTC after', () => {
    expect(fires(berlin('0 9 * * *'), '2026-03-28T00:00:00Z', 2)).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z']);
  });

  it('reads 6-field expressions with seconds first', () => {
    expect(fires({ cron: '*/20 * * * * *', timezone: 'UTC' }, '2026-01-01T00:00:00Z', 3)).toEqual([
      '2026-01-01T00:00:20.000Z',
      '2026-01-01T00:00:40.000Z',
      '2026-01-01T00:01:00.000Z',
    ]);
  });

  it('counts intervals on a grid from the anchor', () => {
    const timing = { intervalMs: 90_000 };
    const anchor = at('2026-01-01T00:00:00Z');
    expect(iso(nextFireAfter(timing, anchor, anchor))).toBe('2026-01-01T00:01:30.000Z');
    expect(iso(nextFireAfter(timing, at('2026-01-01T00:04:00Z'), anchor))).toBe('2026-01-01T00:04:30.000Z');
  });

  it('fires a slightly late schedule, but treats one late past the next fire as missed', () => {
    const hourly: ScheduleTiming = { cron: '0 * * * *', timezone: 'UTC' };
    const scheduled = at('2026-01-01T10:00:00Z');
    expect(decideFire(hourly, 'skip', scheduled, scheduled + 5_000, 0)).toEqual({
      fire: true,
      nextMs: at('2026-01-01T11:00:00Z'),
      missed: false,
    });
    expect(decideFire(hourly, 'skip', scheduled, at('2026-01-01T13:20:00Z'), 0)).toEqual({
      fire: false,
      nextMs: at('2026-01-01T14:00:00Z'),
      missed: true,
    });
    expect(decideFire(hourly, 'run_once', scheduled, at('2026-01-01T13:20:00Z'), 0)).toEqual({
      fire: true,
      nextMs: at('2026-01-01T14:00:00Z'),
      missed: true,
    });
  });
});
