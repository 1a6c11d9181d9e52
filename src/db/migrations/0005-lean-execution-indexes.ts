import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * Every index on `executions` costs each commit that writes an execution one more B-tree page
 * (in SQLite's WAL, a 4 KiB frame). Two of them indexed every execution for queries that only
 * look at a few: the queue (`status, run_at`) and the parent link. A webhook run is created
 * `running`, ends `completed`, has `run_at` null throughout and no parent, so with partial
 * indexes it touches neither. Measured on the 2-core VM, the statements of one
 * webhook -> code -> respond delivery took 300-350 µs with the full indexes and 180-260 µs
 * with these (two commits a delivery; 150 vs 110 µs with four deliveries a commit).
 *
 * - `executions_due_idx`: pending and waiting executions due by time (`run_at` is set only
 *   while an execution waits for a time: pending, a wait or a retry delay); every query of the
 *   queue compares `run_at`, which implies the index's condition on both dialects.
 * - `executions_running_idx`: executions left running, read once at start (recovery); the
 *   condition is a literal in the query too, so both planners can match it.
 * - `executions_parent_idx`: children only.
 */
export async function up(db: Kysely<unknown>, _dialect: SqlDialect): Promise<void> {
  await db.schema.dropIndex('executions_queue_idx').execute();
  await db.schema.dropIndex('executions_parent_idx').execute();
  await db.schema
    .createIndex('executions_due_idx')
    .on('executions')
    .columns(['run_at', 'id'])
    .where(sql.ref('run_at'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('executions_running_idx')
    .on('executions')
    .column('id')
    .where(sql<boolean>`status = 'running'`)
    .execute();
  await db.schema
    .createIndex('executions_parent_idx')
    .on('executions')
    .column('parent_execution_id')
    .where(sql.ref('parent_execution_id'), 'is not', null)
    .execute();
}
