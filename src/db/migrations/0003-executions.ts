import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * Executions and their steps. The executions table is also the work queue: `run_at` says when a
 * pending or waiting execution is due, `lease_owner`/`lease_expires_at` who runs it.
 * Draft runs freeze the live canvas into a snapshot too (`draft` true), so every execution runs
 * a graph that cannot change under it and recovery re-reads the same graph.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  await db.schema
    .alterTable('workflow_snapshots')
    .addColumn('draft', dialect.booleanType, (c) => c.notNull().defaultTo(dialect.name === 'postgres' ? false : 0))
    .execute();

  await db.schema
    .createTable('executions')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('workflow_id', text, (c) => c.notNull())
    .addColumn('workflow_snapshot_id', text, (c) => c.notNull())
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('triggered_by_step_id', text)
    .addColumn('parent_execution_id', text)
    .addColumn('call_depth', 'integer', (c) => c.notNull())
    .addColumn('retry_of_execution_id', text)
    .addColumn('user_id', text)
    .addColumn('started_at', text)
    .addColumn('finished_at', text)
    .addColumn('inserted_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addColumn('context', text)
    .addColumn('inputs', text)
    .addColumn('output', text)
    .addColumn('error', text)
    .addColumn('step_count', 'integer')
    .addColumn('run_at', text)
    .addColumn('lease_owner', text)
    .addColumn('lease_expires_at', text)
    .addColumn('response', text)
    .execute();
  await db.schema.createIndex('executions_workspace_idx').on('executions').columns(['workspace_id', 'inserted_at', 'id']).execute();
  await db.schema.createIndex('executions_workflow_idx').on('executions').columns(['workflow_id', 'inserted_at', 'id']).execute();
  // The queue: due pending/waiting executions in order.
  await db.schema.createIndex('executions_queue_idx').on('executions').columns(['status', 'run_at', 'id']).execute();
  await db.schema.createIndex('executions_parent_idx').on('executions').column('parent_execution_id').execute();

  await db.schema
    .createTable('execution_steps')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull())
    .addColumn('workflow_execution_id', text, (c) => c.notNull().references('executions.id').onDelete('cascade'))
    .addColumn('node_id', text, (c) => c.notNull())
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('workflow_step_id', text)
    .addColumn('awaiting_workflow_execution_id', text)
    .addColumn('duration_ms', 'integer')
    .addColumn('started_at', text)
    .addColumn('finished_at', text)
    .addColumn('iter_index', 'integer')
    .addColumn('kind', text)
    .addColumn('loop_node_id', text)
    .addColumn('provider', text)
    .addColumn('input', text)
    .addColumn('output', text)
    .addColumn('error', text)
    .addColumn('logs', text)
    .addColumn('ports', text)
    .addColumn('memory_bytes', 'integer')
    .addColumn('output_bytes', 'integer')
    .addColumn('reductions', 'bigint')
    .addColumn('resume_at', text)
    .addColumn('inserted_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('execution_steps_execution_idx')
    .on('execution_steps')
    .columns(['workflow_execution_id', 'inserted_at', 'id'])
    .execute();
}
