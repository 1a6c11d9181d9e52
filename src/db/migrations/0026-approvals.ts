import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/**
 * Approval steps (issue 37 item 5): the decision on each waiting approval step, one row per
 * step. The primary key on `step_id` is what makes a decision exactly-once: a person deciding
 * through the API, a signed link and the engine applying the time-out all insert here, and only
 * the first insert lands (docs/run-control.md "Approvals").
 *
 * - `decision`: `approve`, `reject`, or `timed_out` (the time-out failed the step).
 * - `input`: JSON text given with the decision (null when none).
 * - `decided_by`: the user id (API), `url` (a signed link) or `timeout`.
 */
export async function up(db: Kysely<unknown>, _dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('approval_decisions')
    .addColumn('step_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('execution_id', 'text', (c) => c.notNull().references('executions.id').onDelete('cascade'))
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('decision', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('input', 'text')
    .addColumn('decided_at', 'text', (c) => c.notNull())
    .addColumn('decided_by', 'text', (c) => c.notNull())
    .execute();
  // Retention deletes an execution's decisions with it (engine/retention.ts).
  await db.schema.createIndex('approval_decisions_execution_idx').on('approval_decisions').column('execution_id').execute();
}
