import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * Stores, their rows and the tombstones of deleted keys.
 *
 * - `stores_slug_idx` is partial (live stores only), so a deleted store's slug is free at once
 *   while the sweeper still removes its rows.
 * - `stores_list_idx` serves the list (oldest first) and `stores_deleted_idx` the sweeper; a
 *   live store has no entry in the latter.
 * - `store_rows_feed_idx` is the change cursor's order, (updated_at, key) within a store.
 * - `store_deletions_feed_idx` is the deletions feed's order; `store_deletions_pruned_idx`
 *   finds tombstones past the retention period across stores.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  await db.schema
    .createTable('stores')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('slug', text, (c) => c.notNull())
    .addColumn('description', text)
    .addColumn('schema', text, (c) => c.notNull())
    .addColumn('schema_version', 'integer', (c) => c.notNull())
    .addColumn('row_count', 'integer', (c) => c.notNull())
    .addColumn('row_cap', 'integer', (c) => c.notNull())
    .addColumn('last_write_at', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addColumn('deleted_at', text)
    .execute();
  await db.schema
    .createIndex('stores_slug_idx')
    .on('stores')
    .columns(['workspace_id', 'slug'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('stores_list_idx')
    .on('stores')
    .columns(['workspace_id', 'created_at', 'id'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('stores_deleted_idx')
    .on('stores')
    .column('deleted_at')
    .where(sql.ref('deleted_at'), 'is not', null)
    .execute();

  await db.schema
    .createTable('store_rows')
    .addColumn('store_id', text, (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('key', text, (c) => c.notNull())
    .addColumn('row', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addColumn('workflow_id', text)
    .addColumn('execution_id', text)
    .addPrimaryKeyConstraint('store_rows_pk', ['store_id', 'key'])
    .execute();
  await db.schema.createIndex('store_rows_feed_idx').on('store_rows').columns(['store_id', 'updated_at', 'key']).execute();

  await db.schema
    .createTable('store_deletions')
    .addColumn('store_id', text, (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('key', text, (c) => c.notNull())
    .addColumn('deleted_at', text, (c) => c.notNull())
    .addColumn('workflow_id', text)
    .addPrimaryKeyConstraint('store_deletions_pk', ['store_id', 'key'])
    .execute();
  await db.schema.createIndex('store_deletions_feed_idx').on('store_deletions').columns(['store_id', 'deleted_at', 'key']).execute();
  await db.schema.createIndex('store_deletions_pruned_idx').on('store_deletions').column('deleted_at').execute();
}
