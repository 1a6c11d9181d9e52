import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { notFound } from '../../errors/app-error.js';
import { isUuid } from '../../lib/ids.js';
import { buildServiceDocument, type ServiceDocument } from '../../documents/service-document.js';
import { referenceFieldsOf } from '../../documents/reference-fields.js';
import { ERROR_WORKFLOW_SETTING } from '../../documents/error-workflow-reference.js';
import { ReferenceLookups } from '../../store/reference-lookups.js';
import { WorkflowRepository, type WorkflowRow } from '../../store/workflow-repository.js';
import type { Actor } from './workflow-service.js';

/** `GET /workflows/:id/export` and the CLI's `workflow export`: the live canvas as a `service/v1` document. */
export class WorkflowExports {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async exportWorkflow(actor: Pick<Actor, 'workspaceId'>, id: string): Promise<ServiceDocument> {
    const row = isUuid(id) ? await new WorkflowRepository(this.db, actor.workspaceId).find(id) : undefined;
    if (!row) throw notFound('workflow');
    return this.documentOf(actor.workspaceId, row);
  }

  /** The document of a workflow row of `workspaceId` (folder exports call it per workflow). */
  async documentOf(workspaceId: string, row: WorkflowRow): Promise<ServiceDocument> {
    const graph = JSON.parse(row.graph) as Record<string, unknown>;
    const fields = referenceFieldsOf(graph).filter((field) => typeof field.value === 'string' && isUuid(field.value));
    const lookups = new ReferenceLookups(this.db, workspaceId);
    const workflowIds = new Set(fields.filter((f) => f.resource === 'workflow').map((f) => f.value as string));
    if (row.error_workflow_id !== null) workflowIds.add(row.error_workflow_id);
    const workflows = await lookups.workflowsByIds([...workflowIds]);
    const stores = await lookups.storesByIds([...new Set(fields.filter((f) => f.resource === 'store').map((f) => f.value as string))]);
    const document = buildServiceDocument(
      {
        export_key: row.export_key,
        name: row.name,
        description: row.description,
        build_mode: row.build_mode,
        build_prompt: row.build_prompt,
        ai_auto_probe: Boolean(row.ai_auto_probe),
        graph,
      },
      { workflow: (id) => workflows.get(id), store: (id) => stores.get(id) },
      this.clock.now(),
    );
    // Named by export key, as a call target is, and bound again (or reported) on import (error-workflow-reference.ts).
    const errorWorkflow = row.error_workflow_id === null ? undefined : workflows.get(row.error_workflow_id);
    if (errorWorkflow) document.settings[ERROR_WORKFLOW_SETTING] = errorWorkflow.export_key;
    return document;
  }
}
