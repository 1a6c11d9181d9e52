import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { throttledProbe } from './throttled-probe.js';

describe('throttledProbe', () => {
  it('asks at most once an interval and answers the last value in between', () => {
    let asked = 0;
    const probe = throttledProbe(() => (asked += 1), 50);
    const started = performance.now();
    const answers = new Set<number>();
    for (let i = 0; i < 10_000; i += 1) answers.add(probe());
    const elapsed = performance.now() - started;
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(Math.floor(elapsed / 50) + 1);
    expect([...answers]).toEqual(Array.from({ length: asked }, (_, i) => i + 1));
  });

  it('asks again once the interval has passed', async () => {
    let value = 7;
    const probe = throttledProbe(() => value, 1);
    expect(probe()).toBe(7);
    value = 8;
    await sleep(2);
    expect(probe()).toBe(8);
  });
});
