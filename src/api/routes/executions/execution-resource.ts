import { ERROR_WORKFLOW_SKIPPED, EXECUTION_STATUSES } from '../../../db/schema.js';
import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';
import { workflowResource } from '../workflows/workflow-resource.js';

/**
 * The execution resource; "default" follows the spec's default/opt-in marking exactly, so the
 * heavy payloads (`context`, `inputs`, `output`, `error`) are read only when a caller names them
 * in `fields[execution]`. Ids are UUID v7, so the `-inserted_at,-id` default is newest first
 * even among executions inserted in the same microsecond.
 */
export const executionResource: ResourceDefinition = {
  type: 'execution',
  table: 'executions',
  defaultSort: '-inserted_at',
  attributes: {
    status: { kind: 'enum', values: EXECUTION_STATUSES, default: true },
    workflow_id: { kind: 'uuid', default: true },
    triggered_by_step_id: { kind: 'uuid', nullable: true, default: true },
    started_at: { kind: 'timestamp', nullable: true, default: true },
    finished_at: { kind: 'timestamp', nullable: true, default: true },
    inserted_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp' },
    context: { kind: 'object', nullable: true },
    inputs: { kind: 'object', nullable: true },
    // The terminal step's output: whatever JSON that step produced, not only objects.
    output: { kind: 'object', nullable: true, schema: {} },
    error: { kind: 'object', nullable: true },
    step_count: { kind: 'integer', nullable: true },
    user_id: { kind: 'uuid', nullable: true },
    workflow_snapshot_id: { kind: 'uuid' },
    workspace_id: { kind: 'uuid' },
    // Lineage (run control, docs/run-control.md), opt-in like every attribute the spec does not list.
    retry_of: { kind: 'uuid', column: 'retry_of_execution_id', nullable: true },
    replay_of: { kind: 'uuid', column: 'replay_of_execution_id', nullable: true },
    rerun_of: { kind: 'uuid', column: 'rerun_of_execution_id', nullable: true },
    rerun_from_node_id: { kind: 'string', nullable: true },
    // On an error workflow's execution: the failed execution it reports.
    error_of: { kind: 'uuid', column: 'error_of_execution_id', nullable: true },
    // On a failed execution: the error workflow's execution it started, or why none started.
    error_workflow_execution_id: { kind: 'uuid', nullable: true },
    error_workflow_skipped: { kind: 'enum', values: ERROR_WORKFLOW_SKIPPED, nullable: true },
  },
  relationFilters: {
    workflow: { resource: () => workflowResource, localColumn: 'workflow_id' },
  },
};

/** Relationship name -> related type, for the response schemas. */
export const EXECUTION_RELATIONSHIPS = { workflow: 'workflow' };
