import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';
import { STEP_COLUMNS } from './0019-hand-off.js';
import { admitHandingOff, EXECUTION_VALUES } from './0020-lean-queue-scans.js';
import { PRESENCE_CHECK } from './0022-hand-off-presence-locks.js';
import { DECLARATIONS, NOTIFY_CHUNKS } from './0024-hand-off-chunks.js';

/** The executions' new columns: where a run came from, and what its failure started. */
export const RUN_CONTROL_EXECUTION_COLUMNS = [
  'replay_of_execution_id',
  'rerun_of_execution_id',
  'rerun_from_node_id',
  'error_of_execution_id',
  'error_workflow_execution_id',
  'error_workflow_skipped',
] as const;

/**
 * Run control (issue 37): where an execution came from and what its failure started, and which
 * step records were reused from another execution.
 *
 * - `executions.replay_of_execution_id`: a replay (`POST /executions/:id/replay`) names its source;
 *   `rerun_of_execution_id` and `rerun_from_node_id` name a re-run's source and the node it ran
 *   from; `error_of_execution_id` is set on an error workflow's execution, naming the failed
 *   execution it reports (such an execution never starts an error workflow itself); and on a
 *   failed execution whose workflow names an error workflow, `error_workflow_execution_id` names
 *   the execution of it that the failure started, or `error_workflow_skipped` says why none did
 *   (`missing`, `inactive`, `loop`).
 * - `execution_steps.reused_from_step_id`: a record copied from another execution (a retry's or
 *   a re-run's completed steps) names the record it copies; the API shows it as `reused`.
 * - `workflows.error_workflow_id`: the workflow started when an execution of this one fails.
 *
 * On PostgreSQL `sy_admit_handing_off` (migrations 0019-0024) names every column it inserts, so
 * it is made again with the new ones: a handed-off re-run keeps its lineage and reused records.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  for (const column of RUN_CONTROL_EXECUTION_COLUMNS) {
    await db.schema.alterTable('executions').addColumn(column, 'text').execute();
  }
  await db.schema.alterTable('execution_steps').addColumn('reused_from_step_id', 'text').execute();
  await db.schema.alterTable('workflows').addColumn('error_workflow_id', 'text').execute();
  // Deleting a workflow clears the references to it (workflow-service), found through this index.
  await db.schema.createIndex('workflows_error_workflow_idx').on('workflows').columns(['workspace_id', 'error_workflow_id']).execute();
  if (dialect.name !== 'postgres') return;
  const executions: ReadonlyArray<[string, string]> = [
    ...EXECUTION_VALUES,
    ...RUN_CONTROL_EXECUTION_COLUMNS.map((c): [string, string] => [c, `x.${c}`]),
  ];
  await sql
    .raw(
      admitHandingOff(
        PRESENCE_CHECK,
        true,
        { declarations: DECLARATIONS, block: NOTIFY_CHUNKS },
        { executions, steps: `${STEP_COLUMNS}, reused_from_step_id` },
      ),
    )
    .execute(db);
}
