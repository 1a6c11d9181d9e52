import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * A store under restore (services/stores/dump/store-restore.ts).
 *
 * - `stores.restoring_until`: set while a restore fills the store, null once its last batch
 *   has committed. Such a store is invisible to every route, step and lookup (it holds its slug
 *   all the same), so nobody reads or writes half a restore. The time is a lease, renewed by
 *   every batch: past it, the restore is taken for abandoned (its process died) and the sweeper
 *   deletes the store.
 * - `stores_restoring_idx` (partial: only stores under restore have an entry) lets the
 *   sweeper find expired leases without reading the stores table.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema.alterTable('stores').addColumn('restoring_until', dialect.textType).execute();
  await db.schema
    .createIndex('stores_restoring_idx')
    .on('stores')
    .column('restoring_until')
    .where(sql.ref('restoring_until'), 'is not', null)
    .execute();
}
