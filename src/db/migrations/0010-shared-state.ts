import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * State that several API processes on one PostgreSQL share (docs/deploy.md). Nothing on SQLite:
 * one process owns that database and keeps both in memory.
 *
 * - `rate_limits`: one counter per limited key (an API token, a webhook sender's address) and the
 *   end of its window, counted by one upsert per request (`sy_count_hit`, called by
 *   store/rate-limit-counters.ts). UNLOGGED: the counters are worth less than the WAL a logged
 *   table would write, and flush at commit, for every request (a transaction that wrote no WAL
 *   commits without waiting for a flush); a crash or a fail-over to a standby starts every window
 *   afresh, which only ever lets requests through. No index beyond the key: an indexed
 *   `window_ends_at` would rule out HOT updates of the hot rows; the minutely sweep of expired
 *   rows reads the table, which holds only the keys of the last minute.
 * - Write announcements: after every statement that writes a table an in-process cache reads,
 *   the database sends the table's name on the `sy_tables` channel (db/table-notices.ts). The
 *   notice is transactional (delivered at commit, never for a rollback, one per table per
 *   transaction) and covers every writer: any process, the CLI, hand-written SQL. The caches
 *   read `api_tokens`, `workspaces`, `users` (token look-ups), `webhooks`, `workflows` (webhook
 *   endpoints, call targets, lists), `workflow_folders` and `step_templates` (lists). The engine's
 *   tables (`executions`, `execution_steps`) carry no trigger: no cache is kept for them on
 *   PostgreSQL, and they take most of the writes.
 *   `api_tokens` announces updates of the columns a look-up reads only: `last_used_at`, written
 *   once a minute per token in use, would otherwise flush every process's token cache that
 *   often. A column added to `api_tokens` later that look-ups read must join that list.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await sql`create unlogged table rate_limits (
    key text collate "C" primary key,
    hits integer not null,
    window_ends_at timestamptz not null
  )`.execute(db);
  // A key's first hit inserts it; a later one adds to it, or starts a new window when the stored
  // one has ended; the row lock orders concurrent hits on one key. A function because PL/pgSQL
  // keeps its statement's plan for the session: called with fresh parameters on every request,
  // the bare upsert was planned each time (~105 us a call against ~78 us).
  await sql`create function sy_count_hit(hit_key text, window_ms integer, out hits integer, out ttl_ms integer) language plpgsql as $$
    #variable_conflict use_column
    begin
      insert into rate_limits as r (key, hits, window_ends_at)
      values (hit_key, 1, now() + window_ms * interval '1 millisecond')
      on conflict (key) do update set
        hits = case when r.window_ends_at <= now() then 1 else r.hits + 1 end,
        window_ends_at = case when r.window_ends_at <= now() then excluded.window_ends_at else r.window_ends_at end
      returning r.hits, ceil(extract(epoch from r.window_ends_at - now()) * 1000)::integer into hits, ttl_ms;
    end
  $$`.execute(db);

  await sql`create function sy_announce_write() returns trigger language plpgsql as $$
    begin
      perform pg_notify('sy_tables', tg_table_name);
      return null;
    end
  $$`.execute(db);
  for (const table of ['workspaces', 'users', 'webhooks', 'workflows', 'workflow_folders', 'step_templates']) {
    await sql`create trigger sy_announce_write after insert or update or delete or truncate on ${sql.table(table)} for each statement execute function sy_announce_write()`.execute(
      db,
    );
  }
  const readColumns = [
    'id',
    'workspace_id',
    'user_id',
    'name',
    'token_prefix',
    'token_hash',
    'scope',
    'expires_at',
    'revoked_at',
    'created_at',
  ];
  await sql`create trigger sy_announce_write after insert or delete or truncate or update of ${sql.join(readColumns.map((c) => sql.ref(c)))} on api_tokens for each statement execute function sy_announce_write()`.execute(
    db,
  );
}
