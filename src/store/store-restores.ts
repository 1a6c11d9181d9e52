import type { Kysely, Transaction } from 'kysely';
import type { SqlDialect } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';
import type { StoreRow } from './store-repository.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The store row of a restore in progress (`restoring_until` set), which StoreRepository never
 * shows: read and, on PostgreSQL, locked by each of the restore's batches, as every writer of a
 * live store locks it (store-write.ts). Undefined once the restore was abandoned.
 */
export function lockRestoringStore(db: Db, dialect: SqlDialect, id: string): Promise<StoreRow | undefined> {
  const query = db
    .selectFrom('stores')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .where('restoring_until', 'is not', null);
  return (dialect.rowLocks ? query.forUpdate() : query).executeTakeFirst();
}

/**
 * A batch's changes to its store: the count, the last write time and the lease, renewed, or
 * null on the last batch, whose commit makes the store visible.
 */
export async function updateRestoringStore(
  db: Db,
  id: string,
  changes: Pick<StoreRow, 'row_count' | 'last_write_at' | 'restoring_until'>,
): Promise<void> {
  await db
    .updateTable('stores')
    .set(changes)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .where('restoring_until', 'is not', null)
    .execute();
}

/** Gives a restore up: its store becomes a deleted one, whose rows the sweeper removes. */
export async function abandonRestore(db: Db, id: string, now: string): Promise<void> {
  await db
    .updateTable('stores')
    .set({ deleted_at: now, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .where('restoring_until', 'is not', null)
    .execute();
}

/**
 * Restores whose lease ran out (their process died, or their client stopped sending for that
 * long) become deleted stores, for the sweeper. A batch of such a restore that comes later finds
 * its store gone and fails. Returns the stores abandoned.
 */
export async function abandonExpiredRestores(db: Db, now: string): Promise<number> {
  const result = await db
    .updateTable('stores')
    .set({ deleted_at: now, updated_at: now })
    .where('restoring_until', '<', now)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
