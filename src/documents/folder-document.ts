import { isPlainObject } from '../lib/json.js';
import { DocumentProblems, unsupportedDocument } from './import-errors.js';
import type { ImportDraft } from './import-draft.js';
import { mapN8nWorkflow } from './n8n/map-n8n-workflow.js';
import { readN8nWorkflow, unwrapN8n } from './n8n/n8n-document.js';
import { FOLDER_FORMAT } from './read-document.js';
import { readServiceDocument, SERVICE_FORMAT, type ServiceDocument } from './service-document.js';

/** The `service-folder/v1` document (docs/import.md, OpenAPI `ServiceFolderDocument`). */
export interface FolderDocument {
  format: typeof FOLDER_FORMAT;
  exported_at: string;
  name: string;
  /** The workflows filed in the folder itself. */
  workflows: ServiceDocument[];
  /** Its sub-folders (folders are one level deep), each with its workflows. */
  folders: Array<{ name: string; workflows: ServiceDocument[] }>;
  /** Calls among the document's workflows, `[caller export key, callee export key]`. */
  calls: Array<[string, string]>;
}

/** The calls among a set of workflow documents, from their references. */
export function callsAmong(documents: ServiceDocument[]): Array<[string, string]> {
  const keys = new Set(documents.map((d) => d.export_key));
  const calls: Array<[string, string]> = [];
  for (const document of documents) {
    for (const reference of document.references.workflows) {
      if (keys.has(reference.export_key) && !calls.some(([a, b]) => a === document.export_key && b === reference.export_key))
        calls.push([document.export_key, reference.export_key]);
    }
  }
  return calls;
}

export interface FolderDraft {
  name: string | null;
  /** Sub-folders by index; a workflow names its folder by that index (null: the folder itself). */
  folders: string[];
  workflows: Array<{ folder: number | null; draft: ImportDraft }>;
}

/**
 * A folder document (ours), or an n8n `export:workflow` list (all workflows into one new
 * folder, calls among them rewired by n8n workflow id), read into drafts.
 */
export function readFolderDocument(document: unknown, pointer: string): FolderDraft {
  if (Array.isArray(document)) {
    if (document.length === 0 || !document.every((item) => unwrapN8n(item, pointer) !== null))
      throw unsupportedDocument(pointer, 'The list is not a list of n8n workflows.');
    return {
      name: null,
      folders: [],
      workflows: document.map((item, i) => ({ folder: null, draft: mapN8nWorkflow(readN8nWorkflow(item, `${pointer}/${i}`)) })),
    };
  }
  if (!isPlainObject(document)) throw unsupportedDocument(pointer, 'The document must be an object.');
  if (document.format !== FOLDER_FORMAT) {
    throw unsupportedDocument(
      document.format === undefined ? pointer : `${pointer}/format`,
      document.format === SERVICE_FORMAT
        ? `A "${SERVICE_FORMAT}" document holds one workflow: import it with POST /workflows.`
        : `A folder import takes a "${FOLDER_FORMAT}" document.`,
    );
  }
  const problems = new DocumentProblems();
  for (const key of Object.keys(document))
    if (!['format', 'exported_at', 'name', 'workflows', 'folders', 'calls'].includes(key))
      problems.add(`${pointer}/${key}`, `"${key}" is not a member of a ${FOLDER_FORMAT} document`);
  if (typeof document.name !== 'string' || document.name.trim() === '' || document.name.length > 200)
    problems.add(`${pointer}/name`, 'name must be a non-empty string of at most 200 characters');
  const workflows: FolderDraft['workflows'] = [];
  const folders: string[] = [];
  const readList = (list: unknown, at: string, folder: number | null) => {
    if (list === undefined) return;
    if (!Array.isArray(list)) return problems.add(at, 'workflows must be a list of service/v1 documents');
    list.forEach((item: unknown, i) => {
      if (!isPlainObject(item) || item.format !== SERVICE_FORMAT)
        return problems.add(`${at}/${i}`, `each workflow must be a "${SERVICE_FORMAT}" document`);
      try {
        workflows.push({ folder, draft: readServiceDocument(item, `${at}/${i}`) });
      } catch (error) {
        const items = (error as { items?: Array<{ detail: string; source?: { pointer?: string } }> }).items;
        if (!items) throw error;
        for (const item of items) problems.add(item.source?.pointer ?? `${at}/${i}`, item.detail);
      }
    });
  };
  readList(document.workflows, `${pointer}/workflows`, null);
  if (document.folders !== undefined && !Array.isArray(document.folders)) problems.add(`${pointer}/folders`, 'folders must be a list');
  (Array.isArray(document.folders) ? document.folders : []).forEach((sub: unknown, i) => {
    const at = `${pointer}/folders/${i}`;
    if (!isPlainObject(sub) || typeof sub.name !== 'string' || sub.name.trim() === '' || sub.name.length > 200)
      return problems.add(at, 'a sub-folder needs a name of at most 200 characters');
    folders.push(sub.name.trim());
    readList(sub.workflows, `${at}/workflows`, folders.length - 1);
  });
  problems.throwIfAny();
  return { name: (document.name as string).trim(), folders, workflows };
}
