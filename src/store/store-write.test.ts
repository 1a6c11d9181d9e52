import { describe, expect, it } from 'vitest';
import { writeTime } from './store-write.js';

describe('write times', () => {
  it("takes the caller's time when it is after the store's last write", () => {
    expect(writeTime('2026-11-01T00:00:00.000005Z', { last_write_at: null })).toBe('2026-11-01T00:00:00.000005Z');
    expect(writeTime('2026-11-01T00:00:00.000005Z', { last_write_at: '2026-11-01T00:00:00.000004Z' })).toBe('2026-11-01T00:00:00.000005Z');
  });

  it("goes 1 µs past the last write when the clock is not ahead of it (equal, behind, or another process's clock)", () => {
    expect(writeTime('2026-11-01T00:00:00.000005Z', { last_write_at: '2026-11-01T00:00:00.000005Z' })).toBe('2026-11-01T00:00:00.000006Z');
    expect(writeTime('2026-11-01T00:00:00.000000Z', { last_write_at: '2026-11-01T00:00:00.999999Z' })).toBe('2026-11-01T00:00:01.000000Z');
  });
});
