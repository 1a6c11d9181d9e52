import { describe, expect, it } from 'vitest';
import { formatMicros, manualClock, parseTimestampMicros } from './clock.js';

const reference = (micros: number) =>
  `${new Date(Math.floor(micros / 1000)).toISOString().slice(0, 23)}${String(micros % 1000).padStart(3, '0')}Z`;

describe('formatMicros', () => {
  it('formats microseconds as RFC 3339 UTC with six fraction digits', () => {
    expect(formatMicros(1_764_000_000_000_001)).toBe('2025-11-24T16:00:00.000001Z');
    expect(formatMicros(1_764_000_000_123_450)).toBe('2025-11-24T16:00:00.123450Z');
  });

  it('agrees with a fresh Date formatting for values within, across and back across milliseconds', () => {
    const base = 1_790_000_000_000_000;
    const values = [
      base,
      base + 1,
      base + 9,
      base + 10,
      base + 99,
      base + 100,
      base + 999,
      base + 1000,
      base + 5,
      base + 86_400_000_000 + 7,
      base + 3,
      0,
      999,
      1000,
    ];
    for (const value of values) expect(formatMicros(value)).toBe(reference(value));
  });

  it('round-trips through parseTimestampMicros', () => {
    for (const value of [1_790_000_000_000_000, 1_790_000_000_000_042, 1_790_000_000_999_999])
      expect(parseTimestampMicros(formatMicros(value))).toBe(value);
  });

  it('gives a manual clock strictly increasing timestamps that sort as text', () => {
    const clock = manualClock('2026-01-01T00:00:00.000998Z');
    const stamps = [clock.now(), clock.now(), clock.now(), clock.now()];
    expect(stamps).toEqual([
      '2026-01-01T00:00:00.000998Z',
      '2026-01-01T00:00:00.000999Z',
      '2026-01-01T00:00:00.001000Z',
      '2026-01-01T00:00:00.001001Z',
    ]);
    expect([...stamps].sort()).toEqual(stamps);
  });
});
