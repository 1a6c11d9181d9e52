import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * PostgreSQL only: `sy_claim_executions` (migration 0017) plans its statements once per
 * connection instead of at every call.
 *
 * PL/pgSQL caches a plan for each statement of a function, but a statement with parameters gets
 * a custom plan (planned anew) at each call for as long as PostgreSQL judges a custom plan
 * cheaper than the generic one, which for the claim's seven statements it kept doing: planning
 * was about a third of the call. Measured on a scratch database, claiming one new execution at
 * a time, server-side execution time p50 in alternating runs: 0.99 / 0.70 / 0.83 ms with custom
 * plans, 0.75 / 0.59 / 0.70 ms with generic ones. The generic plans were checked at 60,000
 * finished executions: index scans throughout (the running-lease index for the counts and the
 * takeovers, the due index for pending and waiting work, the primary key for the update).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await sql`alter function sy_claim_executions(text, text, integer, integer, integer) set plan_cache_mode = force_generic_plan`.execute(db);
}
