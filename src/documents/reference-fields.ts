import { isPlainObject } from '../lib/json.js';
import type { ReferenceResource } from './import-draft.js';

/**
 * Config fields that name something outside the workflow, by step type (DESIGN.md step config
 * reference). Exports replace their ids with portable names; imports bind them again. A `*`
 * walks every element of an array.
 */
const REFERENCE_FIELDS: Array<{ step: string; path: string[]; resource: ReferenceResource; optional?: boolean }> = [
  { step: 'call_workflow', path: ['workflow_id'], resource: 'workflow' },
  { step: 'save_to_store', path: ['store_id'], resource: 'store' },
  { step: 'read_store', path: ['store_id'], resource: 'store' },
  { step: 'agent', path: ['memory_id'], resource: 'memory', optional: true },
  { step: 'agent', path: ['store_ids', '*'], resource: 'store' },
  { step: 'agent', path: ['knowledge_base_ids', '*'], resource: 'knowledge_base' },
  { step: 'agent', path: ['tools', '*', 'workflow_id'], resource: 'workflow' },
];

export interface ReferenceField {
  /** Inside the graph: `/nodes/3/config/workflow_id`. */
  pointer: string;
  resource: ReferenceResource;
  value: unknown;
  /** A null here means "none" rather than "unbound" (an agent without memory). */
  optional: boolean;
}

/** Every reference field present in a graph's nodes (a graph in Switchyard's shape, possibly unvalidated). */
export function referenceFieldsOf(graph: unknown): ReferenceField[] {
  if (!isPlainObject(graph) || !Array.isArray(graph.nodes)) return [];
  const fields: ReferenceField[] = [];
  graph.nodes.forEach((node: unknown, index) => {
    if (!isPlainObject(node) || !isPlainObject(node.config)) return;
    for (const field of REFERENCE_FIELDS) {
      if (field.step !== node.type) continue;
      walk(node.config, field.path, `/nodes/${index}/config`, (pointer, value) =>
        fields.push({ pointer, resource: field.resource, value, optional: field.optional === true }),
      );
    }
  });
  return fields;
}

function walk(value: unknown, path: string[], pointer: string, visit: (pointer: string, value: unknown) => void): void {
  const [head, ...rest] = path;
  if (head === undefined) {
    visit(pointer, value);
    return;
  }
  if (head === '*') {
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, rest, `${pointer}/${i}`, visit));
    return;
  }
  if (!isPlainObject(value) || !Object.hasOwn(value, head)) return;
  // A tool's workflow_id counts only on workflow tools.
  if (head === 'workflow_id' && value.type !== undefined && value.type !== 'workflow') return;
  walk(value[head], rest, `${pointer}/${head}`, visit);
}

/** Pointers of every `connection_id` member at any depth of the nodes' configs. */
export function connectionFieldsOf(graph: unknown): string[] {
  if (!isPlainObject(graph) || !Array.isArray(graph.nodes)) return [];
  const pointers: string[] = [];
  const visit = (value: unknown, pointer: string) => {
    if (Array.isArray(value)) value.forEach((item, i) => visit(item, `${pointer}/${i}`));
    else if (isPlainObject(value)) {
      for (const [key, item] of Object.entries(value)) {
        if (key === 'connection_id') pointers.push(`${pointer}/connection_id`);
        else visit(item, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
      }
    }
  };
  graph.nodes.forEach((node: unknown, index) => {
    if (isPlainObject(node) && isPlainObject(node.config)) visit(node.config, `/nodes/${index}/config`);
  });
  return pointers;
}
