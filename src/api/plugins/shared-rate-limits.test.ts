import { describe, expect, it } from 'vitest';
import type { RateLimitCounters } from '../../store/rate-limit-counters.js';
import { SharedRateLimits } from './shared-rate-limits.js';

/** Counters that record what they were asked, and answer as told. */
function fakeCounters(answer: () => Promise<{ hits: number; ttlMs: number }>) {
  const counted: [string, number][] = [];
  let sweeps = 0;
  const counters = {
    count: (key: string, windowMs: number) => {
      counted.push([key, windowMs]);
      return answer();
    },
    deleteExpired: async () => {
      sweeps += 1;
      if (sweeps > 1) throw new Error('database unreachable');
      return 3;
    },
  } as unknown as RateLimitCounters;
  return { counters, counted };
}

const incr = (store: { incr: (...args: never[]) => void }, key: string, windowMs: number) =>
  new Promise<{ error: Error | null; result?: { current: number; ttl: number } }>((resolve) =>
    (store.incr as (k: string, cb: (e: Error | null, r?: { current: number; ttl: number }) => void, w: number, m: number) => void)(
      key,
      (error, result) => resolve({ error, result }),
      windowMs,
      10,
    ),
  );

describe('SharedRateLimits', () => {
  it('gives @fastify/rate-limit a store that counts namespaced keys in the plugin’s window', async () => {
    const { counters, counted } = fakeCounters(async () => ({ hits: 4, ttlMs: 59_000 }));
    const shared = new SharedRateLimits(counters, () => {});
    const Store = shared.storeFor('api');
    const store = new Store({});
    expect(await incr(store, 'token-1', 60_000)).toEqual({ error: null, result: { current: 4, ttl: 59_000 } });
    const Webhooks = shared.storeFor('webhook');
    await incr(new Webhooks({}), '203.0.113.1', 60_000);
    // A route with its own limit counts apart (the plugin hands the route as routeInfo).
    const child = store.child({ routeInfo: { method: 'POST', url: '/api/v1/workflows' } } as never);
    await incr(child, 'token-1', 1_000);
    expect(counted).toEqual([
      ['api:token-1', 60_000],
      ['webhook:203.0.113.1', 60_000],
      ['api:POST/api/v1/workflows:token-1', 1_000],
    ]);
  });

  it('hands a failed count to the plugin as an error (the request fails rather than going uncounted)', async () => {
    const failure = new Error('connection refused');
    const { counters } = fakeCounters(() => Promise.reject(failure));
    const Store = new SharedRateLimits(counters, () => {}).storeFor('api');
    expect(await incr(new Store({}), 'token-1', 60_000)).toEqual({ error: failure, result: undefined });
  });

  it('sweeps expired counters, reporting a failed sweep instead of throwing', async () => {
    const errors: unknown[] = [];
    const { counters } = fakeCounters(async () => ({ hits: 1, ttlMs: 1 }));
    const shared = new SharedRateLimits(counters, (error) => errors.push(error));
    expect(await shared.sweep()).toBe(3);
    expect(await shared.sweep()).toBe(0);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain('database unreachable');
  });
});
