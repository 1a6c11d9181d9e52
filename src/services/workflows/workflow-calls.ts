import type { Transaction } from 'kysely';
import type { Database, WorkflowCallSource } from '../../db/schema.js';
import { callTargetsOf } from '../../graph/call-targets.js';
import { WorkflowCallRepository } from '../../store/workflow-call-repository.js';

/**
 * Keeps `workflow_calls` in step with a graph being written, in the write's transaction: the
 * live canvas on every save (PUT /graph, duplicate, import) and the snapshot on activation.
 */
export async function recordCalls(
  trx: Transaction<Database>,
  workspaceId: string,
  workflowId: string,
  source: WorkflowCallSource,
  graph: unknown,
): Promise<void> {
  await new WorkflowCallRepository(trx, workspaceId).replace(workflowId, source, callTargetsOf(graph));
}
