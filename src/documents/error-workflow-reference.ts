import type { DocumentProblems } from './import-errors.js';

/**
 * A workflow's error workflow in a `service/v1` document (docs/run-control.md "Error
 * workflows"): `settings.error_workflow`, the error workflow's export key (a string), present
 * only when the workflow names one. It is the workflow's attribute, not a graph setting: an
 * import takes it out of the settings before they reach the graph, and binds it by export key,
 * as a call target is bound (another workflow of the importing workspace or of the same folder
 * import); otherwise it is a requirement under `requirements.bindings` with
 * `attribute: "error_workflow_id"`, and `error_workflow_id` stays null: an id from the exporting
 * workspace is never carried over.
 */
export interface ErrorWorkflowReference {
  export_key: string;
}

/** The member of a document's `settings` that carries it. */
export const ERROR_WORKFLOW_SETTING = 'error_workflow';

/** The requirement's pointer: the workflow attribute (not inside the graph, as the other bindings' are). */
export const ERROR_WORKFLOW_POINTER = '/error_workflow_id';

/** service-document.ts EXPORT_KEY_PATTERN (imported from there it would be a cycle). */
const EXPORT_KEY = /^[A-Za-z0-9:._-]{1,200}$/;

/**
 * `settings.error_workflow` of a document read for import (undefined when absent or null), and
 * the settings without it (the graph's own).
 */
export function readErrorWorkflowSetting(
  settings: Record<string, unknown>,
  pointer: string,
  problems: DocumentProblems,
): { reference: ErrorWorkflowReference | undefined; graphSettings: Record<string, unknown> } {
  const { [ERROR_WORKFLOW_SETTING]: entry, ...graphSettings } = settings;
  if (entry === undefined || entry === null) return { reference: undefined, graphSettings };
  if (typeof entry !== 'string' || !EXPORT_KEY.test(entry)) {
    problems.add(
      `${pointer}/${ERROR_WORKFLOW_SETTING}`,
      'error_workflow must be the export key of the error workflow (1 to 200 letters, digits, ":", ".", "_" or "-")',
    );
    return { reference: undefined, graphSettings };
  }
  return { reference: { export_key: entry }, graphSettings };
}

/** The detail of the requirement an unbound error workflow leaves. */
export function errorWorkflowRequirementDetail(reference: ErrorWorkflowReference): string {
  return `started when an execution fails: the workflow with export key ${reference.export_key}: import it too (it is bound when found), or set error_workflow_id with PATCH /workflows/:id`;
}
