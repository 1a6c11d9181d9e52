import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * One endpoint per webhook node (`webhooks`, its id is the node's `webhook_id`) and the answers
 * of deliveries that carried an idempotency key (`webhook_deliveries`, kept 24 hours).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  await db.schema
    .createTable('webhooks')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('workflow_id', text, (c) => c.notNull().references('workflows.id').onDelete('cascade'))
    .addColumn('node_id', text, (c) => c.notNull())
    .addColumn('verification', text, (c) => c.notNull())
    .addColumn('hmac_format', text)
    .addColumn('hmac_header', text)
    .addColumn('secret_encrypted', text)
    .addColumn('token_hash', text)
    .addColumn('max_body_bytes', 'integer', (c) => c.notNull())
    .addColumn('capturing', dialect.booleanType, (c) => c.notNull().defaultTo(dialect.name === 'postgres' ? false : 0))
    .addColumn('capture_payload', text)
    .addColumn('capture_shape', text)
    .addColumn('captured_at', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_node_idx').on('webhooks').columns(['workflow_id', 'node_id']).unique().execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('webhook_id', text, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('idempotency_key', text, (c) => c.notNull())
    .addColumn('execution_id', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['webhook_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_created_idx').on('webhook_deliveries').column('created_at').execute();
}
