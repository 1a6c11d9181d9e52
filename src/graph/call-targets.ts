import { isPlainObject } from '../lib/json.js';

/**
 * The nil UUID marks a reference an import could not bind (a store or a called workflow the
 * importing workspace lacks): it passes the config schemas, names nothing, and activation
 * refuses it with its pointer (`unbound_reference`) until the user binds it.
 */
export const UNBOUND_ID = '00000000-0000-0000-0000-000000000000';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The distinct workflow ids a graph's `call_workflow` steps name, in first-seen order. Reads
 * any JSON (stored graphs and snapshots), so it never throws on an odd shape; unbound and
 * malformed ids are not calls.
 */
export function callTargetsOf(graph: unknown): string[] {
  if (!isPlainObject(graph) || !Array.isArray(graph.nodes)) return [];
  const targets: string[] = [];
  for (const node of graph.nodes) {
    if (!isPlainObject(node) || node.type !== 'call_workflow' || !isPlainObject(node.config)) continue;
    const id = node.config.workflow_id;
    if (typeof id === 'string' && UUID.test(id) && id !== UNBOUND_ID && !targets.includes(id.toLowerCase())) targets.push(id.toLowerCase());
  }
  return targets;
}
