import type { AppProvider } from '../db/schema.js';
import type { ImportReport } from './import-report.js';
import type { ErrorWorkflowReference } from './error-workflow-reference.js';

export type ReferenceResource = 'workflow' | 'store' | 'memory' | 'knowledge_base' | 'installation';

/**
 * A reference in an imported graph that the importing workspace must resolve. `pointer` is the
 * field inside the graph (`/nodes/3/config/workflow_id`); the field holds the nil UUID until
 * bound (graph/call-targets.ts `UNBOUND_ID`). An installation is the exception: no field names
 * it, so `pointer` is the node (`/nodes/3`) and binding only checks that the workspace has one.
 */
export interface BindingRequest {
  pointer: string;
  resource: ReferenceResource;
  /** How to find it; null: it cannot be bound from the document (a requirement then). */
  by:
    { export_key: string } | { self: true } | { slug: string } | { id: string } | { providers: AppProvider[]; account_id?: string } | null;
  detail: string;
  facts?: Record<string, unknown>;
}

/** A document read into Switchyard's terms, before the workspace is consulted. */
export interface ImportDraft {
  source: { format: 'service/v1' | 'n8n' | 'graph'; shape?: string; n8n_id?: string | null };
  name: string | null;
  description: string | null;
  attributes: { build_mode?: string; build_prompt?: string | null; ai_auto_probe?: boolean };
  /** The export key the document asks for; kept when it is free in the workspace. */
  exportKey: string | null;
  /** A graph in Switchyard's shape, not yet validated against the step catalog. */
  graph: Record<string, unknown>;
  /** Where the graph sits in the request body, for validation errors. */
  graphPointer: string;
  /** Whether nodes came without positions, so the graph is laid out. */
  layout: boolean;
  bindings: BindingRequest[];
  report: ImportReport;
  /** The workflow's error workflow (service/v1 `settings.error_workflow`), bound by export key or reported. */
  errorWorkflow?: ErrorWorkflowReference;
}
