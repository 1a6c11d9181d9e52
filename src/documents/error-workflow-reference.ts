import { isPlainObject } from '../lib/json.js';
import type { DocumentProblems } from './import-errors.js';

/**
 * A workflow's error workflow in a `service/v1` document (docs/run-control.md "Error
 * workflows"): `references.error_workflow`, `{export_key, name}`, present only when the workflow
 * names one. It names no graph field (the attribute is the workflow's, not a node's), so it
 * travels beside the graph's references. An import binds it by export key, as a call target is
 * bound (another workflow of the importing workspace or of the same folder import); otherwise
 * it is a requirement under `requirements.bindings` with `attribute: "error_workflow_id"`, and
 * `error_workflow_id` stays null: an id from the exporting workspace is never carried over.
 */
export interface ErrorWorkflowReference {
  export_key: string;
  name: string;
}

/** The requirement's pointer: the workflow attribute (not inside the graph, as the other bindings' are). */
export const ERROR_WORKFLOW_POINTER = '/error_workflow_id';

/** service-document.ts EXPORT_KEY_PATTERN (imported from there it would be a cycle). */
const EXPORT_KEY = /^[A-Za-z0-9:._-]{1,200}$/;

/** `references.error_workflow` of a document read for import; undefined when absent. */
export function readErrorWorkflowReference(
  references: Record<string, unknown>,
  pointer: string,
  problems: DocumentProblems,
): ErrorWorkflowReference | undefined {
  const entry = references.error_workflow;
  if (entry === undefined || entry === null) return undefined;
  if (!isPlainObject(entry) || typeof entry.export_key !== 'string' || !EXPORT_KEY.test(entry.export_key)) {
    problems.add(`${pointer}/error_workflow/export_key`, 'an error workflow reference needs its export_key');
    return undefined;
  }
  return { export_key: entry.export_key, name: typeof entry.name === 'string' ? entry.name : entry.export_key };
}

/** The detail of the requirement an unbound error workflow leaves. */
export function errorWorkflowRequirementDetail(reference: ErrorWorkflowReference): string {
  return `started when an execution fails: workflow "${reference.name}" (export key ${reference.export_key}): import it too (it is bound when found), or set error_workflow_id with PATCH /workflows/:id`;
}
