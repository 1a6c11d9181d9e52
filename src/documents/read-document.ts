import { isPlainObject } from '../lib/json.js';
import { findStepDefinition } from '../steps/registry.js';
import { ImportReport } from './import-report.js';
import { unsupportedDocument } from './import-errors.js';
import type { ImportDraft } from './import-draft.js';
import { looksLikeN8nWorkflow, readN8nWorkflow, unwrapN8n } from './n8n/n8n-document.js';
import { mapN8nWorkflow } from './n8n/map-n8n-workflow.js';
import { readServiceDocument, SERVICE_FORMAT, unlistedBindings } from './service-document.js';
import { installationBindings } from './installation-references.js';

export const FOLDER_FORMAT = 'service-folder/v1';

export type DocumentKind = 'service' | 'n8n' | 'graph';

/**
 * Which format a document is in, decided from its structure alone and never guessed: a
 * `format` member names ours; `connections` (an object keyed by node names) is n8n's, `edges`
 * (a list) a bare graph's; with neither, the nodes themselves must all be n8n nodes
 * (`typeVersion`, `parameters`, a dotted type) or all Switchyard nodes (a step type). Anything
 * ambiguous or unknown is refused with a pointer and the formats that are accepted.
 */
export function detectDocument(document: unknown, pointer: string): DocumentKind {
  if (Array.isArray(document)) {
    if (document.length > 0 && document.every((item) => unwrapN8n(item, pointer) !== null)) {
      if (document.length === 1) return 'n8n';
      throw unsupportedDocument(
        pointer,
        `The document is a list of ${document.length} n8n workflows (n8n export:workflow output): import them one at a time, or all together with POST /folders/import.`,
      );
    }
    throw unsupportedDocument(pointer, 'The document is a list, and not a list of n8n workflows.');
  }
  if (!isPlainObject(document)) throw unsupportedDocument(pointer, 'The document must be an object.');
  if (document.format !== undefined) {
    if (document.format === SERVICE_FORMAT) return 'service';
    if (document.format === FOLDER_FORMAT)
      throw unsupportedDocument(`${pointer}/format`, `A "${FOLDER_FORMAT}" document holds a folder: import it with POST /folders/import.`);
    throw unsupportedDocument(`${pointer}/format`, `The format ${JSON.stringify(document.format)} is not one this service reads.`);
  }
  if (unwrapN8n(document, pointer) !== null && !looksLikeN8nWorkflow(document)) return 'n8n';
  const hasConnections = document.connections !== undefined;
  const hasEdges = document.edges !== undefined;
  if (document.nodes !== undefined && !Array.isArray(document.nodes))
    throw unsupportedDocument(`${pointer}/nodes`, 'The document\'s "nodes" must be a list of nodes.');
  if (!Array.isArray(document.nodes)) throw unsupportedDocument(pointer, 'The document has no "nodes" list and no "format".');
  if (hasConnections && hasEdges)
    throw unsupportedDocument(
      pointer,
      'The document has both "connections" (n8n) and "edges" (a Switchyard graph), so its format cannot be told.',
    );
  if (hasConnections) {
    if (!isPlainObject(document.connections))
      throw unsupportedDocument(`${pointer}/connections`, 'n8n "connections" must be an object keyed by node names.');
    return 'n8n';
  }
  if (hasEdges) return 'graph';
  const nodes = document.nodes as unknown[];
  if (nodes.length === 0) return 'graph';
  const n8n = nodes.every(
    (node) =>
      isPlainObject(node) &&
      typeof node.type === 'string' &&
      node.type.includes('.') &&
      (node.parameters !== undefined || node.typeVersion !== undefined),
  );
  const ours = nodes.every(
    (node) =>
      isPlainObject(node) &&
      typeof node.type === 'string' &&
      findStepDefinition(node.type) !== undefined &&
      node.parameters === undefined &&
      node.typeVersion === undefined,
  );
  if (n8n) return 'n8n';
  if (ours) return 'graph';
  throw unsupportedDocument(
    pointer,
    'The document has nodes but neither "connections" nor "edges", and its nodes are not all n8n nodes or all Switchyard nodes, so its format cannot be told.',
  );
}

/** A workflow document of any accepted format, read into a draft. */
export function readWorkflowDocument(document: unknown, pointer: string): ImportDraft {
  const kind = detectDocument(document, pointer);
  if (kind === 'service') return readServiceDocument(document as Record<string, unknown>, pointer);
  if (kind === 'n8n') {
    const [single, at] = Array.isArray(document) ? [document[0], `${pointer}/0`] : [document, pointer];
    return mapN8nWorkflow(readN8nWorkflow(single, at));
  }
  return readBareGraph(document as Record<string, unknown>, pointer);
}

/** A bare `{nodes, edges}` graph: ids it names are checked against the workspace, as are the installations its nodes need; positions missing everywhere are laid out. */
function readBareGraph(document: Record<string, unknown>, pointer: string): ImportDraft {
  const graph = structuredClone(document);
  const nodes = graph.nodes as unknown[];
  return {
    source: { format: 'graph' },
    name: null,
    description: null,
    attributes: {},
    exportKey: null,
    graph,
    graphPointer: pointer,
    layout: nodes.length > 0 && nodes.every((node) => !isPlainObject(node) || node.position === undefined),
    bindings: [...unlistedBindings(graph), ...installationBindings(graph)],
    report: new ImportReport(),
  };
}
