import { isPlainObject } from '../lib/json.js';
import { UNBOUND_ID } from '../graph/call-targets.js';
import { WEBHOOK_READ_ONLY_FIELDS } from '../steps/webhook/index.js';
import { DocumentProblems } from './import-errors.js';
import { ImportReport } from './import-report.js';
import type { BindingRequest, ImportDraft, ReferenceResource } from './import-draft.js';
import { readPointer, writePointer } from './json-pointer-path.js';
import { connectionFieldsOf, referenceFieldsOf } from './reference-fields.js';
import { installationBindings, installationUsesOf, isAppProvider } from './installation-references.js';
import type { AppProvider } from '../db/schema.js';
import { readErrorWorkflowSetting } from './error-workflow-reference.js';

export const SERVICE_FORMAT = 'service/v1';
/** Export keys: portable names, so documents stay readable and keys stay valid in URLs and filenames. */
export const EXPORT_KEY_PATTERN = /^[A-Za-z0-9:._-]{1,200}$/;

export interface WorkflowReference {
  export_key: string;
  name: string;
  pointers: string[];
}
export interface StoreReference {
  slug: string;
  name: string;
  pointers: string[];
}
export interface UnnamedReference {
  pointers: string[];
}
/** Nodes that work through a provider installation: any one of `providers` serves, for `account_id` when a node pins it. */
export interface InstallationReference {
  providers: AppProvider[];
  account_id?: string;
  /** The nodes (`/nodes/3`): no config field names an installation. */
  pointers: string[];
}

/** The `service/v1` document (docs/import.md, OpenAPI `ServiceDocument`). */
export interface ServiceDocument {
  format: typeof SERVICE_FORMAT;
  exported_at: string;
  export_key: string;
  name: string;
  description: string | null;
  build_mode: string;
  build_prompt: string | null;
  ai_auto_probe: boolean;
  graph: { nodes: unknown[]; edges: unknown[]; annotations?: unknown[] };
  /** The graph settings, and `error_workflow` (an export key) when the workflow names one (error-workflow-reference.ts). */
  settings: Record<string, unknown>;
  references: {
    workflows: WorkflowReference[];
    stores: StoreReference[];
    memories: UnnamedReference[];
    knowledge_bases: UnnamedReference[];
    installations: InstallationReference[];
  };
}

export interface ExportSource {
  export_key: string;
  name: string;
  description: string | null;
  build_mode: string;
  build_prompt: string | null;
  ai_auto_probe: boolean;
  graph: Record<string, unknown>;
}

/** What an export may name a referenced resource by; undefined: it no longer exists here. */
export interface ExportLookups {
  workflow: (id: string) => { export_key: string; name: string } | undefined;
  store: (id: string) => { slug: string; name: string } | undefined;
}

/**
 * A workflow as a portable document: environment ids stripped (webhook ids and URLs, store,
 * workflow, memory and knowledge-base ids, connection ids), referenced resources named by
 * portable names with the pointers that used them, installations by provider with the nodes
 * that need them, settings beside the graph. Secrets are never in a stored graph to begin with.
 */
export function buildServiceDocument(source: ExportSource, lookups: ExportLookups, exportedAt: string): ServiceDocument {
  const graph = structuredClone(source.graph);
  const settings = isPlainObject(graph.settings) ? graph.settings : {};
  delete graph.settings;
  const nodes = Array.isArray(graph.nodes) ? graph.nodes : [];
  for (const node of nodes) {
    if (!isPlainObject(node) || node.type !== 'webhook' || !isPlainObject(node.config)) continue;
    for (const field of WEBHOOK_READ_ONLY_FIELDS) delete node.config[field];
    if (isPlainObject(node.config.verification)) delete node.config.verification.secret;
  }
  const references: ServiceDocument['references'] = { workflows: [], stores: [], memories: [], knowledge_bases: [], installations: [] };
  for (const field of referenceFieldsOf(graph)) {
    if (typeof field.value !== 'string') continue;
    writePointer(graph, field.pointer, null);
    if (field.value === UNBOUND_ID) continue;
    if (field.resource === 'workflow') {
      const found = lookups.workflow(field.value);
      if (found)
        group(
          references.workflows,
          (r) => r.export_key === found.export_key,
          () => ({ export_key: found.export_key, name: found.name, pointers: [] }),
        ).pointers.push(field.pointer);
    } else if (field.resource === 'store') {
      const found = lookups.store(field.value);
      if (found)
        group(
          references.stores,
          (r) => r.slug === found.slug,
          () => ({ slug: found.slug, name: found.name, pointers: [] }),
        ).pointers.push(field.pointer);
    } else if (field.resource === 'memory') {
      references.memories.push({ pointers: [field.pointer] });
    } else if (field.resource === 'knowledge_base') {
      references.knowledge_bases.push({ pointers: [field.pointer] });
    }
  }
  for (const pointer of connectionFieldsOf(graph)) writePointer(graph, pointer, null);
  for (const use of installationUsesOf(graph)) {
    const key = JSON.stringify([use.providers, use.account_id ?? null]);
    const entry = group(
      references.installations,
      (r) => JSON.stringify([r.providers, r.account_id ?? null]) === key,
      () => ({ providers: use.providers, ...(use.account_id === undefined ? {} : { account_id: use.account_id }), pointers: [] }),
    );
    entry.pointers.push(use.pointer);
  }
  return {
    format: SERVICE_FORMAT,
    exported_at: exportedAt,
    export_key: source.export_key,
    name: source.name,
    description: source.description,
    build_mode: source.build_mode,
    build_prompt: source.build_prompt,
    ai_auto_probe: source.ai_auto_probe,
    graph: graph as ServiceDocument['graph'],
    settings,
    references,
  };
}

function group<T>(list: T[], match: (item: T) => boolean, make: () => T): T {
  const found = list.find(match);
  if (found) return found;
  const made = make();
  list.push(made);
  return made;
}

const TOP_LEVEL = [
  'format',
  'exported_at',
  'export_key',
  'name',
  'description',
  'build_mode',
  'build_prompt',
  'ai_auto_probe',
  'graph',
  'settings',
  'references',
];

/** Reads a `service/v1` document into a draft; `pointer` addresses the document in the request. */
export function readServiceDocument(document: Record<string, unknown>, pointer: string): ImportDraft {
  const problems = new DocumentProblems();
  for (const key of Object.keys(document))
    if (!TOP_LEVEL.includes(key)) problems.add(`${pointer}/${key}`, `"${key}" is not a member of a ${SERVICE_FORMAT} document`);
  const text = (key: string, max: number, nullable: boolean) => {
    const value = document[key];
    if (value === undefined || (nullable && value === null)) return null;
    if (typeof value !== 'string' || value.length > max)
      problems.add(`${pointer}/${key}`, `${key} must be a string of at most ${max} characters${nullable ? ' or null' : ''}`);
    return typeof value === 'string' ? value : null;
  };
  const name = text('name', 200, false);
  const description = text('description', 10_000, true);
  const buildPrompt = text('build_prompt', 20_000, true);
  const exportKey = text('export_key', 200, false);
  if (exportKey !== null && !EXPORT_KEY_PATTERN.test(exportKey))
    problems.add(`${pointer}/export_key`, 'export_key must be 1 to 200 letters, digits, ":", ".", "_" or "-"');
  const buildMode = document.build_mode;
  if (buildMode !== undefined && buildMode !== 'guided' && buildMode !== 'advanced')
    problems.add(`${pointer}/build_mode`, 'build_mode must be "guided" or "advanced"');
  if (document.ai_auto_probe !== undefined && typeof document.ai_auto_probe !== 'boolean')
    problems.add(`${pointer}/ai_auto_probe`, 'ai_auto_probe must be a boolean');
  const graph = document.graph;
  if (!isPlainObject(graph)) problems.add(`${pointer}/graph`, 'graph must be an object {nodes, edges}');
  if (document.settings !== undefined && !isPlainObject(document.settings))
    problems.add(`${pointer}/settings`, 'settings must be an object');
  if (isPlainObject(graph) && graph.settings !== undefined)
    problems.add(`${pointer}/graph/settings`, `a ${SERVICE_FORMAT} document carries settings beside the graph, not in it`);
  const references = document.references === undefined ? {} : document.references;
  if (!isPlainObject(references)) problems.add(`${pointer}/references`, 'references must be an object');
  problems.throwIfAny();

  const draftGraph: Record<string, unknown> = structuredClone(graph as Record<string, unknown>);
  // `settings.error_workflow` is the workflow's attribute, never a graph setting.
  const { reference: errorWorkflow, graphSettings } = readErrorWorkflowSetting(
    isPlainObject(document.settings) ? document.settings : {},
    `${pointer}/settings`,
    problems,
  );
  if (Object.keys(graphSettings).length > 0) draftGraph.settings = structuredClone(graphSettings);
  const bindings = referenceBindings(draftGraph, references as Record<string, unknown>, `${pointer}/references`, problems);
  problems.throwIfAny();
  const attributes: ImportDraft['attributes'] = {};
  if (typeof buildMode === 'string') attributes.build_mode = buildMode;
  if (document.build_prompt !== undefined) attributes.build_prompt = buildPrompt;
  if (typeof document.ai_auto_probe === 'boolean') attributes.ai_auto_probe = document.ai_auto_probe;
  return {
    source: { format: SERVICE_FORMAT },
    name,
    description,
    attributes,
    exportKey,
    graph: draftGraph,
    graphPointer: `${pointer}/graph`,
    layout: false,
    bindings,
    report: new ImportReport(),
    errorWorkflow,
  };
}

/**
 * Binding requests from the references section; every listed pointer must address a reference
 * field of the graph. Reference fields no entry names are bound by the id they hold (a bare
 * graph's), or left unbound.
 */
function referenceBindings(
  graph: Record<string, unknown>,
  references: Record<string, unknown>,
  pointer: string,
  problems: DocumentProblems,
): BindingRequest[] {
  const fields = new Map(referenceFieldsOf(graph).map((field) => [field.pointer, field]));
  const bindings: BindingRequest[] = [];
  const listed = new Set<string>();
  const read = (
    key: string,
    resource: ReferenceResource,
    by: (entry: Record<string, unknown>, at: string) => BindingRequest['by'],
    describe: (entry: Record<string, unknown>) => string,
  ) => {
    const list = references[key];
    if (list === undefined) return;
    if (!Array.isArray(list)) return problems.add(`${pointer}/${key}`, `references.${key} must be a list`);
    list.forEach((entry: unknown, i) => {
      const at = `${pointer}/${key}/${i}`;
      if (!isPlainObject(entry) || !Array.isArray(entry.pointers))
        return problems.add(at, 'a reference needs "pointers", the graph fields that use it');
      const target = by(entry, at);
      entry.pointers.forEach((fieldPointer: unknown, j) => {
        const field = typeof fieldPointer === 'string' ? fields.get(fieldPointer) : undefined;
        if (field === undefined || field.resource !== resource)
          return problems.add(`${at}/pointers/${j}`, `this pointer addresses no ${resource} field of the graph`);
        listed.add(field.pointer);
        bindings.push({ pointer: field.pointer, resource, by: target, detail: describe(entry) });
      });
    });
  };
  read(
    'workflows',
    'workflow',
    (entry, at) => {
      if (typeof entry.export_key !== 'string' || !EXPORT_KEY_PATTERN.test(entry.export_key)) {
        problems.add(`${at}/export_key`, 'a workflow reference needs its export_key');
        return null;
      }
      return { export_key: entry.export_key };
    },
    (entry) =>
      `calls workflow "${String(entry.name ?? entry.export_key)}" (export key ${String(entry.export_key)}): import it too (it is bound when found), or choose the workflow to call`,
  );
  read(
    'stores',
    'store',
    (entry, at) => {
      if (typeof entry.slug !== 'string' || entry.slug === '') {
        problems.add(`${at}/slug`, 'a store reference needs its slug');
        return null;
      }
      return { slug: entry.slug };
    },
    (entry) => `uses store "${String(entry.slug)}": create a store with that slug (it is bound when found), or choose one`,
  );
  read(
    'memories',
    'memory',
    () => null,
    () => 'uses a memory: choose one of this workspace',
  );
  read(
    'knowledge_bases',
    'knowledge_base',
    () => null,
    () => 'searches a knowledge base: choose one of this workspace',
  );
  checkInstallationReferences(graph, references.installations, `${pointer}/installations`, problems);
  bindings.push(...unlistedBindings(graph, listed), ...installationBindings(graph));
  return bindings;
}

/**
 * `references.installations` must describe the graph's nodes truly: every pointer a node that
 * needs an installation of exactly those providers (and that account). The bindings themselves
 * come from the nodes (installationBindings), so a document cannot hide a need by leaving it out.
 */
function checkInstallationReferences(graph: Record<string, unknown>, list: unknown, pointer: string, problems: DocumentProblems): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) return problems.add(pointer, 'references.installations must be a list');
  const uses = new Map(installationUsesOf(graph).map((use) => [use.pointer, use]));
  list.forEach((entry: unknown, i) => {
    const at = `${pointer}/${i}`;
    if (!isPlainObject(entry) || !Array.isArray(entry.pointers))
      return problems.add(at, 'a reference needs "pointers", the graph nodes that use it');
    if (!Array.isArray(entry.providers) || entry.providers.length === 0 || !entry.providers.every(isAppProvider))
      return problems.add(`${at}/providers`, 'an installation reference needs "providers", a list of slack, twilio, mailgun or postmark');
    if (entry.account_id !== undefined && typeof entry.account_id !== 'string')
      return problems.add(`${at}/account_id`, 'account_id must be a string');
    entry.pointers.forEach((nodePointer: unknown, j) => {
      const use = typeof nodePointer === 'string' ? uses.get(nodePointer) : undefined;
      if (use === undefined)
        return problems.add(`${at}/pointers/${j}`, 'this pointer addresses no node of the graph that needs an installation');
      if (
        JSON.stringify([...use.providers].sort()) !== JSON.stringify([...(entry.providers as string[])].sort()) ||
        use.account_id !== entry.account_id
      ) {
        problems.add(
          `${at}/pointers/${j}`,
          `node "${use.node_id}" (${use.step}) needs ${use.providers.join(' or ')}${use.account_id === undefined ? '' : ` account ${use.account_id}`}, not what this reference says`,
        );
      }
    });
  });
}

/** Reference fields no references entry covers: an id is checked against the workspace; null is unbound unless optional. */
export function unlistedBindings(graph: Record<string, unknown>, listed: Set<string> = new Set()): BindingRequest[] {
  const bindings: BindingRequest[] = [];
  for (const field of referenceFieldsOf(graph)) {
    if (listed.has(field.pointer)) continue;
    if (typeof field.value === 'string' && field.value !== UNBOUND_ID) {
      bindings.push({
        pointer: field.pointer,
        resource: field.resource,
        by: { id: field.value },
        detail: `names ${field.resource.replace('_', ' ')} ${field.value}, which must exist in this workspace`,
      });
    } else if (!(field.optional && field.value === null) && readPointer(graph, field.pointer) !== undefined) {
      bindings.push({
        pointer: field.pointer,
        resource: field.resource,
        by: null,
        detail: `names no ${field.resource.replace('_', ' ')}: choose one of this workspace`,
      });
    }
  }
  return bindings;
}
