import { BUILD_MODES, WORKFLOW_STATUSES } from '../../../db/schema.js';
import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';

/** The workflow resource; "default" follows the spec's default/opt-in marking exactly. */
export const workflowResource: ResourceDefinition = {
  type: 'workflow',
  table: 'workflows',
  defaultSort: '-created_at',
  attributes: {
    name: { kind: 'string', default: true },
    ai_auto_probe: { kind: 'boolean', default: true },
    status: { kind: 'enum', values: WORKFLOW_STATUSES, default: true },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
    build_mode: { kind: 'enum', values: BUILD_MODES },
    build_prompt: { kind: 'string', nullable: true },
    graph: { kind: 'object' },
    user_id: { kind: 'uuid' },
    workspace_id: { kind: 'uuid' },
    description: { kind: 'string', nullable: true },
    folder_id: { kind: 'uuid', nullable: true },
    position: { kind: 'number' },
    active_snapshot_id: { kind: 'uuid', nullable: true },
    // The workflow started when an execution of this one fails (docs/run-control.md).
    error_workflow_id: { kind: 'uuid', nullable: true },
  },
};
