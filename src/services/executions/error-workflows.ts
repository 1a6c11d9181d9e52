import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ErrorWorkflowResolver } from '../../engine/engine.js';

/**
 * The engine's `resolveErrorWorkflow` (docs/run-control.md "Error workflows"): the error
 * workflow a failed execution's workflow names, in one read, scoped to the workspace. Asked
 * only when an execution fails, so it is not cached. The engine starts the target's active
 * snapshot; a workflow deleted or inactive is skipped with the reason, which the failed
 * execution records (`error_workflow_skipped`: `missing`, `inactive`).
 */
export function errorWorkflowResolver(db: Kysely<Database>): ErrorWorkflowResolver {
  return async ({ workspaceId, workflowId }) => {
    const row = await db
      .selectFrom('workflows as w')
      .leftJoin('workflows as e', (join) => join.onRef('e.id', '=', 'w.error_workflow_id').onRef('e.workspace_id', '=', 'w.workspace_id'))
      .select([
        'w.name as name',
        'w.error_workflow_id as error_workflow_id',
        'e.id as target_id',
        'e.status as target_status',
        'e.active_snapshot_id as target_snapshot_id',
      ])
      .where('w.workspace_id', '=', workspaceId)
      .where('w.id', '=', workflowId)
      .executeTakeFirst();
    if (!row || row.error_workflow_id === null) return null;
    const workflowName = row.name;
    if (row.target_id === null) return { workflowName, skipped: 'missing' };
    if (row.target_status !== 'active' || row.target_snapshot_id === null) return { workflowName, skipped: 'inactive' };
    return { workflowName, workflowId: row.target_id, snapshotId: row.target_snapshot_id };
  };
}
