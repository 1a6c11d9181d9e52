import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * Several worker processes on one PostgreSQL (src/engine/cluster.ts):
 *
 * - `concurrency_limit`: the snapshot's per-workflow limit, copied onto each execution so a
 *   claim can enforce it across the cluster in SQL.
 * - `waiter`: the process holding the HTTP request of a synchronous webhook delivery: the worker
 *   that commits the respond step's answer (or the end) notifies that process's channel.
 * - `executions_lease_idx` (PostgreSQL only: SQLite runs one process and never claims): running
 *   executions by workflow and lease, for the claim's counts of live runs and its search for
 *   expired leases. Partial, so a finished execution leaves it.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema.alterTable('executions').addColumn('concurrency_limit', 'integer').execute();
  await db.schema.alterTable('executions').addColumn('waiter', dialect.textType).execute();
  if (dialect.name === 'postgres') {
    await db.schema
      .createIndex('executions_lease_idx')
      .on('executions')
      .columns(['workflow_id', 'lease_expires_at'])
      .where(sql<boolean>`status = 'running'`)
      .execute();
  }
}
