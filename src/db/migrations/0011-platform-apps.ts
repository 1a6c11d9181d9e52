import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * Platform triggers (issue 14): events of a provider's app reach ONE endpoint per provider and
 * are routed to a workspace by the sender's account id.
 *
 * - `provider_apps`: the operator's app per provider (its settings as JSON text and its secrets
 *   sealed together with the secret key, lib/secret-box.ts); one row per provider.
 * - `app_installations`: one provider account (Slack team id, Twilio AccountSid, an email
 *   domain or address) linked to one workspace. The account id is unique per provider across
 *   workspaces: an account belongs to at most one workspace, so no workspace can read another's
 *   messages by claiming its account id.
 * - `platform_events`: what a delivery already started, keyed per provider (Slack's event_id,
 *   Twilio's MessageSid, …). Written in the same transaction as the executions it started, so a
 *   redelivery, or a concurrent copy, either finds the key or fails on it and starts nothing.
 * - `bot_threads`: the threads an installation's bot posted in, so replies there are marked
 *   `bot_thread`. Keyed by the thread's root ts (a top-level post is its own thread root).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  await db.schema
    .createTable('provider_apps')
    .addColumn('provider', text, (c) => c.primaryKey())
    .addColumn('settings', text, (c) => c.notNull())
    .addColumn('secrets_sealed', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('app_installations')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('provider', text, (c) => c.notNull())
    .addColumn('account_id', text, (c) => c.notNull())
    .addColumn('bot_user_id', text)
    .addColumn('bot_id', text)
    .addColumn('credentials_sealed', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('app_installations_account_idx')
    .on('app_installations')
    .columns(['provider', 'account_id'])
    .unique()
    .execute();
  await db.schema
    .createIndex('app_installations_workspace_idx')
    .on('app_installations')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('platform_events')
    .addColumn('provider', text, (c) => c.notNull())
    .addColumn('dedupe_key', text, (c) => c.notNull())
    .addColumn('workspace_id', text)
    .addColumn('execution_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('platform_events_pk', ['provider', 'dedupe_key'])
    .execute();
  await db.schema.createIndex('platform_events_created_idx').on('platform_events').column('created_at').execute();

  await db.schema
    .createTable('bot_threads')
    .addColumn('installation_id', text, (c) => c.notNull().references('app_installations.id').onDelete('cascade'))
    .addColumn('channel', text, (c) => c.notNull())
    .addColumn('thread_ts', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_threads_pk', ['installation_id', 'channel', 'thread_ts'])
    .execute();

  // Other processes' caches of apps and installations learn of writes (db/table-notices.ts).
  if (dialect.name === 'postgres') {
    for (const table of ['provider_apps', 'app_installations']) {
      await sql`create trigger sy_announce_write after insert or update or delete or truncate on ${sql.table(table)} for each statement execute function sy_announce_write()`.execute(
        db,
      );
    }
  }
}
