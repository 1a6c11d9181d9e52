import { actionBodySchema, resourceBodySchema } from '../../jsonapi/resource-schemas.js';
import { DESCRIPTION, idOrNull, NAME } from '../body-schemas.js';

/**
 * Request bodies of the workflow routes beyond create (import-schemas.ts) and the graph and run
 * actions (graph-schemas.ts), with exactly the attributes WorkflowService reads.
 */

/** PATCH /workflows/:id: WorkflowService.update takes name, description and error_workflow_id. */
export const UPDATE_WORKFLOW_BODY = resourceBodySchema('workflow', {
  name: NAME,
  description: DESCRIPTION,
  error_workflow_id: idOrNull(
    'another workflow of this workspace, started when an execution of this one fails (docs/run-control.md); null for none',
  ),
});

const SIBLING = 'a sibling in the target folder to place it just before; give before_id or after_id, not both; with neither, it goes last';

/** PATCH /workflows/:id/move: WorkflowService.move. */
export const MOVE_WORKFLOW_BODY = resourceBodySchema(
  'workflow',
  {
    folder_id: idOrNull('the folder to file it in, null for the root; absent: it stays in its folder'),
    before_id: idOrNull(SIBLING),
    after_id: idOrNull(SIBLING.replace('before', 'after')),
  },
  { relationships: { folder: 'workflow-folder' } },
);

/** activate, deactivate, duplicate: nothing to send; `{}` or `{"data": {}}` are taken too. */
export const WORKFLOW_ACTION_BODY = actionBodySchema();
