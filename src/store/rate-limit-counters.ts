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
    // One statement a counted request (the upsert is `sy_count_hit` of migration 0010). Compiled
    // once, as the token look-up is: it runs on every API request.
    this.hit = sql<{ hits: number; ttl_ms: number }>`select hits, ttl_ms from sy_count_hit(${''}, ${0})`.compile(db);
  }

  /** Counts one request for `key` in a window of `windowMs`. */
  async count(key: string, windowMs: number): Promise<CountedHit> {
    const { query, queryId, sql: text } = this.hit;
    const { rows } = await this.db.executeQuery<{ hits: number; ttl_ms: number }>({
      query,
      queryId,
      sql: text,
      parameters: [key, windowMs],
    });
    const row = rows[0]!;
    return { hits: row.hits, ttlMs: row.ttl_ms };
  }

  /** Forgets the keys whose window has ended (a later hit would start afresh anyway). */
  async deleteExpired(): Promise<number> {
    const result = await this.db
      .deleteFrom('rate_limits')
      .where(sql<boolean>`window_ends_at <= now()`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
