import { STEP_STATUSES } from '../../../db/schema.js';
import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';
import { toResourceObject, type ResourceObject } from '../../jsonapi/serialize.js';
import { apiUrl, type ApiContext } from '../../api-context.js';
import { executionResource } from './execution-resource.js';

/** A step's input and output are whatever JSON the step took and gave: any value or null. */
const ANY_JSON = {};

/**
 * The execution-step resource. Default attributes follow the spec; `input`, `output`, `error`
 * and `logs` (ours: the console lines of a code step) are opt-in payloads. Lists default to
 * `inserted_at` ascending, the order the steps ran in (UUID v7 ids break ties the same way).
 */
export const executionStepResource: ResourceDefinition = {
  type: 'execution-step',
  table: 'execution_steps',
  defaultSort: 'inserted_at',
  attributes: {
    node_id: { kind: 'string', default: true },
    status: { kind: 'enum', values: STEP_STATUSES, default: true },
    attempt: { kind: 'integer', default: true },
    inserted_at: { kind: 'timestamp', default: true },
    duration_ms: { kind: 'integer', nullable: true, default: true },
    started_at: { kind: 'timestamp', nullable: true, default: true },
    finished_at: { kind: 'timestamp', nullable: true, default: true },
    iter_index: { kind: 'integer', nullable: true, default: true },
    kind: { kind: 'string', nullable: true, default: true },
    loop_node_id: { kind: 'string', nullable: true, default: true },
    provider: { kind: 'string', nullable: true, default: true },
    updated_at: { kind: 'timestamp' },
    workflow_execution_id: { kind: 'uuid' },
    workflow_step_id: { kind: 'uuid', nullable: true },
    awaiting_workflow_execution_id: { kind: 'uuid', nullable: true },
    input: { kind: 'object', nullable: true, schema: ANY_JSON },
    output: { kind: 'object', nullable: true, schema: ANY_JSON },
    error: { kind: 'object', nullable: true },
    logs: { kind: 'object', nullable: true, schema: { type: ['array', 'null'], items: { type: 'string' } } },
    memory_bytes: { kind: 'integer', nullable: true },
    output_bytes: { kind: 'integer', nullable: true },
    reductions: { kind: 'integer', nullable: true },
    resume_at: { kind: 'timestamp', nullable: true },
    // A record copied from another execution (a retry's or a re-run's kept steps): it did not run here.
    reused: { kind: 'boolean', column: 'reused_from_step_id', filterable: false, sortable: false },
    reused_from_step_id: { kind: 'uuid', nullable: true },
  },
  relationFilters: {
    workflow_execution: { resource: () => executionResource, localColumn: 'workflow_execution_id' },
  },
};

export const EXECUTION_STEP_RELATIONSHIPS = { workflow_execution: 'execution' };

/**
 * A step record as a resource object. Steps have no route of their own: the self link is the
 * one-row filter of their execution's step list.
 */
export function executionStepObject(ctx: ApiContext, row: Record<string, unknown>, attributes: Iterable<string>): ResourceObject {
  const executionId = String(row.workflow_execution_id);
  const self = apiUrl(ctx, `/executions/${executionId}/steps?filter%5Bid%5D=${String(row.id)}`);
  return toResourceObject(executionStepResource, row, attributes, self, {
    workflow_execution: { data: { type: 'execution', id: executionId } },
  });
}
