import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export interface CountedHit {
  /** Requests counted in the key's current window, this one included. */
  hits: number;
  /** Milliseconds until the window ends. */
  ttlMs: number;
}

/**
 * Rate-limit counters in PostgreSQL's `rate_limits` (migration 0010), shared by every process on
 * the database. Times are the database's own (`now()`), so the processes' clocks need not agree.
 */
export class RateLimitCounters {
  private readonly hit: CompiledQuery<{ hits: number; ttl_ms: number }>;

  constructor(private readonly db: Kysely<Database>) {
    // One statement a counted request: a key's first hit inserts it; a later one adds to it, or
    // starts a new window when the stored one has ended. The row lock orders concurrent hits
    // on one key. Compiled once, as the token look-up is: it runs on every API request.
    this.hit = sql<{ hits: number; ttl_ms: number }>`
      insert into rate_limits as r (key, hits, window_ends_at)
      values (${''}, 1, now() + make_interval(secs => ${0}::double precision / 1000))
      on conflict (key) do update set
        hits = case when r.window_ends_at <= now() then 1 else r.hits + 1 end,
        window_ends_at = case when r.window_ends_at <= now() then excluded.window_ends_at else r.window_ends_at end
      returning r.hits, ceil(extract(epoch from r.window_ends_at - now()) * 1000)::integer as ttl_ms
    `.compile(db);
  }

  /** Counts one request for `key` in a window of `windowMs`. */
  async count(key: string, windowMs: number): Promise<CountedHit> {
    const { query, queryId, sql: text } = this.hit;
    const { rows } = await this.db.executeQuery<{ hits: number; ttl_ms: number }>({ query, queryId, sql: text, parameters: [key, windowMs] });
    const row = rows[0]!;
    return { hits: row.hits, ttlMs: row.ttl_ms };
  }

  /** Forgets the keys whose window has ended (a later hit would start afresh anyway). */
  async deleteExpired(): Promise<number> {
    const result = await this.db.deleteFrom('rate_limits').where(sql<boolean>`window_ends_at <= now()`).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
