import type { Kysely, Transaction } from 'kysely';
import type { AppProvider, Database, PlatformEventsTable } from '../db/schema.js';

export type PlatformEventRow = PlatformEventsTable;
type Db = Kysely<Database> | Transaction<Database>;

/**
 * Inserts dedupe keys. Called inside the transaction that creates the executions: a key that
 * exists fails the insert on the primary key, and the whole start rolls back.
 */
export async function insertPlatformEvents(db: Db, rows: PlatformEventRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('platform_events').values(rows).execute();
}

/** Which of these keys were already recorded for the provider. */
export async function findPlatformEvents(db: Db, provider: AppProvider, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .selectFrom('platform_events')
    .select('dedupe_key')
    .where('provider', '=', provider)
    .where('dedupe_key', 'in', keys)
    .execute();
  return new Set(rows.map((r) => r.dedupe_key));
}

/** Removes keys older than `before` (providers stop redelivering within hours). */
export async function deletePlatformEventsBefore(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('platform_events').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
