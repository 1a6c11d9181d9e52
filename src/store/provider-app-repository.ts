import type { Kysely, Transaction } from 'kysely';
import type { AppProvider, Database, ProviderAppsTable } from '../db/schema.js';

export type ProviderAppRow = ProviderAppsTable;
type Db = Kysely<Database> | Transaction<Database>;

/** The operator's provider apps: not workspace data, so not scoped by workspace. */
export function findProviderApp(db: Db, provider: AppProvider): Promise<ProviderAppRow | undefined> {
  return db.selectFrom('provider_apps').selectAll().where('provider', '=', provider).executeTakeFirst();
}

export function listProviderApps(db: Db): Promise<ProviderAppRow[]> {
  return db.selectFrom('provider_apps').selectAll().orderBy('provider').execute();
}

/** Inserts or replaces a provider's app, keeping its first `created_at`. */
export async function upsertProviderApp(db: Db, row: ProviderAppRow): Promise<void> {
  await db
    .insertInto('provider_apps')
    .values(row)
    .onConflict((oc) =>
      oc.column('provider').doUpdateSet({ settings: row.settings, secrets_sealed: row.secrets_sealed, updated_at: row.updated_at }),
    )
    .execute();
}
