import { isPlainObject } from '../../lib/json.js';
import type { DocumentProblems } from '../import-errors.js';
import type { Requirement } from '../import-report.js';
import { pointerJoin } from '../json-pointer-path.js';

export interface N8nConnectionTarget {
  node: string;
  type: string;
  index: number;
}

/** n8n's connections, once read: by source node name, by connection type, one list per output index; targets by node name. */
export type N8nConnections = Record<string, Record<string, N8nConnectionTarget[][]>>;

/** A connection whose source (its key) or target names no node of the workflow, by name or by id. */
export interface DroppedConnection {
  /** Where it is in the request: the key (`…/connections/<key>`) or the target's `node` (`…/connections/<key>/main/0/1/node`). */
  documentPointer: string;
  /** The key or the target's `node`, as written. */
  reference: string;
  /** For a target: the node its key named, with the connection type and output index it left by. */
  from: { name: string; type: string; output: number } | null;
}

/**
 * n8n keys connections by source node name and names each target's node by name; community
 * collections write node ids instead (Zie619/n8n-workflows at 94007c14: 1,362 of its 2,061
 * workflows key them by id; earlier versions named targets by id too). A reference is read as a
 * name first, then as an id, so a name that is also another node's id means the named node; an
 * id that several nodes share names none of them.
 */
function nodeResolver(nodes: ReadonlyArray<{ name: string; id: string | null }>): (reference: string) => string | undefined {
  const names = new Set(nodes.map((node) => node.name));
  const byId = new Map<string, string | null>();
  for (const { name, id } of nodes) if (id !== null) byId.set(id, byId.has(id) ? null : name);
  return (reference) => (names.has(reference) ? reference : (byId.get(reference) ?? undefined));
}

/**
 * Reads `connections` into targets by node name. A key or target naming no node is dropped and
 * returned (the import report lists it) instead of refusing the document: those collections also
 * carry connections to error handlers they never added, and the rest of the graph is still worth
 * importing. What is malformed (not an object, not a list, a target without `node`) is a problem.
 * A node keyed both by name and by id gets both sets of targets.
 */
export function readConnections(
  raw: Record<string, unknown>,
  nodes: ReadonlyArray<{ name: string; id: string | null }>,
  pointer: string,
  problems: DocumentProblems,
): { connections: N8nConnections; dropped: DroppedConnection[] } {
  const resolve = nodeResolver(nodes);
  // Maps, not object members: a node may be named `__proto__`.
  const bySource = new Map<string, Map<string, N8nConnectionTarget[][]>>();
  const dropped: DroppedConnection[] = [];
  for (const [key, byType] of Object.entries(raw)) {
    const at = pointerJoin(pointer, key);
    const source = resolve(key);
    if (source === undefined) {
      dropped.push({ documentPointer: at, reference: key, from: null });
      continue;
    }
    if (!isPlainObject(byType)) {
      problems.add(at, 'connections of a node must be an object keyed by connection type');
      continue;
    }
    const types = bySource.get(source) ?? new Map<string, N8nConnectionTarget[][]>();
    bySource.set(source, types);
    for (const [type, outputs] of Object.entries(byType)) {
      if (!Array.isArray(outputs)) {
        problems.add(pointerJoin(at, type), 'connections of a type must be a list with one entry per output');
        continue;
      }
      const lists = types.get(type) ?? [];
      types.set(type, lists);
      outputs.forEach((targets: unknown, output) => {
        const list = (lists[output] ??= []);
        // n8n writes null for an output that leads nowhere.
        if (targets === null || targets === undefined) return;
        if (!Array.isArray(targets)) return problems.add(pointerJoin(at, type, output), 'an output must list its targets');
        targets.forEach((target: unknown, index) => {
          const tat = pointerJoin(at, type, output, index);
          if (!isPlainObject(target) || typeof target.node !== 'string') return problems.add(tat, 'a connection target needs "node"');
          const node = resolve(target.node);
          if (node === undefined) {
            dropped.push({ documentPointer: `${tat}/node`, reference: target.node, from: { name: source, type, output } });
            return;
          }
          const read = {
            node,
            type: typeof target.type === 'string' ? target.type : type,
            index: typeof target.index === 'number' ? target.index : 0,
          };
          if (!list.some((t) => t.node === read.node && t.type === read.type && t.index === read.index)) list.push(read);
        });
      });
    }
  }
  const connections = Object.fromEntries([...bySource].map(([source, types]) => [source, Object.fromEntries(types)]));
  return { connections, dropped };
}

/**
 * A dropped connection as a `bindings` requirement: a reference the import could not bind, like a
 * missing store, but to a node the document lacks. It points at the node the connection left
 * (`/nodes/<i>`), else at `/edges` (a dropped key, or a source that became no step);
 * `document_pointer` is where the connection is in the request.
 */
export function droppedConnectionRequirement(dropped: DroppedConnection, indexOf: ReadonlyMap<string, number>): Requirement {
  const index = dropped.from === null ? undefined : indexOf.get(dropped.from.name);
  const names = `names no node of the workflow, by name or by id`;
  return {
    pointer: index === undefined ? '/edges' : `/nodes/${index}`,
    detail:
      dropped.from === null
        ? `the n8n connections keyed "${dropped.reference}" were dropped: the key ${names}`
        : `the n8n connection from "${dropped.from.name}" (${dropped.from.type} output ${dropped.from.output}) to "${dropped.reference}" was dropped: its target ${names}`,
    resource: 'node',
    n8n_node: dropped.reference,
    document_pointer: dropped.documentPointer,
  };
}
