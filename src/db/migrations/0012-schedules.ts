import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * One row per schedule node of an ACTIVE workflow's snapshot (`schedules`), written when the
 * workflow is activated and deleted when it is deactivated or deleted (cascade). `next_fire_at`
 * is the durable next fire time: a scheduler claims a due row, creates the execution and
 * advances `next_fire_at` in one commit, so a time fires once across restarts and processes.
 * The index on `next_fire_at` serves both the due scan and the earliest-next-fire timer.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  await db.schema
    .createTable('schedules')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('workflow_id', text, (c) => c.notNull().references('workflows.id').onDelete('cascade'))
    .addColumn('snapshot_id', text, (c) => c.notNull())
    .addColumn('node_id', text, (c) => c.notNull())
    .addColumn('cron', text)
    .addColumn('timezone', text)
    .addColumn('interval_seconds', 'integer')
    .addColumn('catch_up', text, (c) => c.notNull())
    .addColumn('anchor_at', text, (c) => c.notNull())
    .addColumn('next_fire_at', text, (c) => c.notNull())
    .addColumn('last_fired_at', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('schedules_node_idx').on('schedules').columns(['workflow_id', 'node_id']).unique().execute();
  await db.schema.createIndex('schedules_next_fire_idx').on('schedules').column('next_fire_at').execute();
}
