import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../../test/support/dialects.js';
import { RateLimitCounters } from './rate-limit-counters.js';

describe.skipIf(!TEST_DATABASE_URL)('rate-limit counters [postgres]', () => {
  let database: TestDatabase;
  let counters: RateLimitCounters;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    counters = new RateLimitCounters(database.db);
  });
  afterAll(() => database.close());

  /** Moves a key's window into the past, as the passing of its time would. */
  const endWindow = (key: string) =>
    sql`update rate_limits set window_ends_at = now() - interval '1 second' where key = ${key}`.execute(database.db);

  it('counts the hits of a key within its window, and reports the time left in it', async () => {
    const first = await counters.count('api:a', 60_000);
    expect(first.hits).toBe(1);
    expect(first.ttlMs).toBeGreaterThan(0);
    expect(first.ttlMs).toBeLessThanOrEqual(60_000);
    expect((await counters.count('api:a', 60_000)).hits).toBe(2);
    const third = await counters.count('api:a', 60_000);
    expect(third.hits).toBe(3);
    expect(third.ttlMs).toBeLessThanOrEqual(first.ttlMs);
    expect((await counters.count('api:b', 60_000)).hits).toBe(1);
  });

  it('counts concurrent hits exactly', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, () => counters.count('api:concurrent', 60_000)));
    expect(results.map((r) => r.hits).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('starts a new window once the last one has ended', async () => {
    await counters.count('api:c', 60_000);
    await counters.count('api:c', 60_000);
    await endWindow('api:c');
    const fresh = await counters.count('api:c', 60_000);
    expect(fresh.hits).toBe(1);
    expect(fresh.ttlMs).toBeGreaterThan(59_000);
  });

  it('sweeps only the keys whose window has ended', async () => {
    await counters.count('api:kept', 60_000);
    await counters.count('api:gone', 60_000);
    await endWindow('api:gone');
    expect(await counters.deleteExpired()).toBe(1);
    const keys = (await sql<{ key: string }>`select key from rate_limits`.execute(database.db)).rows.map((r) => r.key);
    expect(keys).toContain('api:kept');
    expect(keys).not.toContain('api:gone');
  });
});
