import { isPlainObject } from '../../lib/json.js';
import { DocumentProblems } from '../import-errors.js';
import { pointerJoin } from '../json-pointer-path.js';
import { readConnections, type DroppedConnection, type N8nConnections } from './n8n-connections.js';

/** One n8n node as exports carry it. */
export interface N8nNode {
  name: string;
  type: string;
  typeVersion: number | null;
  parameters: Record<string, unknown>;
  position: { x: number; y: number } | null;
  id: string | null;
  credentials: Record<string, unknown>;
  disabled: boolean;
  notes: string | null;
  onError: string | null;
  continueOnFail: boolean;
  retryOnFail: boolean;
  maxTries: number | null;
  waitBetweenTries: number | null;
  webhookId: string | null;
}

/** The shapes n8n workflows travel in (docs/import.md). */
export const N8N_SHAPES = ['editor', 'clipboard', 'template', 'template_api', 'public_api', 'cli_export', 'community'] as const;
export type N8nShape = (typeof N8N_SHAPES)[number];

export interface N8nWorkflow {
  shape: N8nShape;
  name: string | null;
  id: string | null;
  description: string | null;
  nodes: N8nNode[];
  /** Keyed by node name, targets by node name, whichever the document used (n8n-connections.ts). */
  connections: N8nConnections;
  /** Connections naming no node of the workflow: left out of `connections`, listed by the import report. */
  droppedConnections: DroppedConnection[];
  settings: Record<string, unknown>;
  /** Where the workflow object sits in the request (nodes are at `${pointer}/nodes/i`). */
  pointer: string;
}

/** Whether a value has the two members every n8n workflow has. */
export function looksLikeN8nWorkflow(value: unknown): boolean {
  return isPlainObject(value) && Array.isArray(value.nodes) && isPlainObject(value.connections);
}

/**
 * Finds the workflow inside any n8n shape: the template API wraps it twice
 * (`{workflow: {workflow: {nodes, connections}}}`), the editor's template view once
 * (`{id, name, workflow: {nodes, connections}}`); every other shape is the workflow itself.
 * Null when there is none.
 */
export function unwrapN8n(
  document: unknown,
  pointer: string,
): { workflow: Record<string, unknown>; outer: Record<string, unknown>; pointer: string; shape: N8nShape | null } | null {
  if (!isPlainObject(document)) return null;
  if (looksLikeN8nWorkflow(document)) return { workflow: document, outer: document, pointer, shape: null };
  const inner = document.workflow;
  if (isPlainObject(inner) && looksLikeN8nWorkflow(inner))
    return { workflow: inner, outer: document, pointer: `${pointer}/workflow`, shape: 'template' };
  if (isPlainObject(inner) && isPlainObject(inner.workflow) && looksLikeN8nWorkflow(inner.workflow))
    return { workflow: inner.workflow, outer: inner, pointer: `${pointer}/workflow/workflow`, shape: 'template_api' };
  return null;
}

/** Reads and checks an n8n workflow; problems point into the request body. */
export function readN8nWorkflow(document: unknown, pointer: string): N8nWorkflow {
  const found = unwrapN8n(document, pointer);
  const problems = new DocumentProblems();
  if (found === null) {
    problems.add(pointer, 'an n8n workflow needs "nodes" (a list) and "connections" (an object)');
    problems.throwIfAny();
    throw new Error('unreachable');
  }
  const { workflow, outer } = found;
  const nodes: N8nNode[] = [];
  const names = new Set<string>();
  (workflow.nodes as unknown[]).forEach((raw, index) => {
    const at = pointerJoin(found.pointer, 'nodes', index);
    if (!isPlainObject(raw)) return problems.add(at, 'an n8n node must be an object');
    if (typeof raw.type !== 'string' || raw.type === '') problems.add(`${at}/type`, 'an n8n node needs a "type"');
    if (typeof raw.name !== 'string' || raw.name === '') problems.add(`${at}/name`, 'an n8n node needs a "name"');
    else if (names.has(raw.name))
      problems.add(`${at}/name`, `two nodes are named "${raw.name}"; n8n connections name nodes, so names must be unique`);
    else names.add(raw.name);
    if (raw.parameters !== undefined && !isPlainObject(raw.parameters)) problems.add(`${at}/parameters`, 'parameters must be an object');
    const position = raw.position;
    const positioned =
      Array.isArray(position) && position.length === 2 && position.every((n) => typeof n === 'number' && Number.isFinite(n));
    if (position !== undefined && !positioned) problems.add(`${at}/position`, 'position must be [x, y]');
    if (typeof raw.type !== 'string' || typeof raw.name !== 'string') return;
    nodes.push({
      name: raw.name,
      type: raw.type,
      typeVersion: typeof raw.typeVersion === 'number' ? raw.typeVersion : null,
      parameters: isPlainObject(raw.parameters) ? raw.parameters : {},
      position: positioned ? { x: (position as number[])[0]!, y: (position as number[])[1]! } : null,
      id: typeof raw.id === 'string' ? raw.id : null,
      credentials: isPlainObject(raw.credentials) ? raw.credentials : {},
      disabled: raw.disabled === true,
      notes: typeof raw.notes === 'string' ? raw.notes : null,
      onError: typeof raw.onError === 'string' ? raw.onError : null,
      continueOnFail: raw.continueOnFail === true,
      retryOnFail: raw.retryOnFail === true,
      maxTries: typeof raw.maxTries === 'number' ? raw.maxTries : null,
      waitBetweenTries: typeof raw.waitBetweenTries === 'number' ? raw.waitBetweenTries : null,
      webhookId: typeof raw.webhookId === 'string' ? raw.webhookId : null,
    });
  });
  const { connections, dropped } = readConnections(
    workflow.connections as Record<string, unknown>,
    nodes,
    pointerJoin(found.pointer, 'connections'),
    problems,
  );
  problems.throwIfAny();
  const name = typeof workflow.name === 'string' ? workflow.name : typeof outer.name === 'string' ? outer.name : null;
  const id = workflow.id ?? outer.id;
  return {
    shape: found.shape ?? shapeOf(workflow),
    name,
    id: typeof id === 'string' || typeof id === 'number' ? String(id) : null,
    description:
      typeof workflow.description === 'string'
        ? workflow.description
        : typeof outer.description === 'string' && found.shape === 'template'
          ? outer.description
          : null,
    nodes,
    connections,
    droppedConnections: dropped,
    settings: isPlainObject(workflow.settings) ? workflow.settings : {},
    pointer: found.pointer,
  };
}

/** Which export produced the object: only informational (reported in `meta.source.shape`). */
function shapeOf(workflow: Record<string, unknown>): N8nShape {
  if (Array.isArray(workflow.tags) && workflow.tags.some((tag) => typeof tag === 'string')) return 'community';
  if (
    workflow.shared !== undefined ||
    workflow.isArchived !== undefined ||
    (workflow.createdAt !== undefined && workflow.staticData !== undefined)
  )
    return 'public_api';
  if (workflow.createdAt !== undefined || workflow.triggerCount !== undefined) return 'cli_export';
  if (typeof workflow.name !== 'string') {
    const meta = isPlainObject(workflow.meta) ? workflow.meta : {};
    return meta.templateId !== undefined || meta.templateCredsSetupCompleted !== undefined ? 'template' : 'clipboard';
  }
  return 'editor';
}
