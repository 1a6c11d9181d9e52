import { AppError, type ErrorItem } from '../../errors/app-error.js';
import type { Graph, GraphViolation } from '../../graph/graph-types.js';
import { findCycle, validateGraph } from '../../graph/validate-graph.js';
import { findLoopBodies } from '../../graph/loop-bodies.js';
import { escapePointerToken } from '../../lib/json-pointer.js';
import { UNBOUND_ID } from '../../graph/call-targets.js';
import { isPlainObject } from '../../lib/json.js';

const GRAPH_POINTER = '/data/attributes/graph';

/** Graph violations as one 422 `invalid_graph`, each with its rule's code and pointer. */
export function invalidGraph(violations: GraphViolation[]): AppError {
  return AppError.many(
    'invalid_graph',
    violations.map((v) => ({ code: v.code, detail: v.detail, source: { pointer: v.pointer } })),
  );
}

/**
 * A stored canvas checked for running (activation, draft runs): valid against the step catalog,
 * not empty, acyclic, with well-formed loop bodies, and finished after an import (no placeholder,
 * no unbound reference). Errors point into the workflow's `graph` attribute.
 */
export function runnableGraph(canvas: string): Graph {
  const result = validateGraph(JSON.parse(canvas), GRAPH_POINTER);
  if (!result.ok) throw invalidGraph(result.violations);
  if (result.graph.nodes.length === 0) {
    throw new AppError('invalid_graph', 'the canvas is empty: push a graph with PUT /workflows/:id/graph first', {
      pointer: `${GRAPH_POINTER}/nodes`,
    });
  }
  const unfinished = unfinishedImport(result.graph);
  if (unfinished.length > 0) throw AppError.many('invalid_graph', unfinished);
  const cycle = findCycle(result.graph);
  if (cycle) {
    throw new AppError('invalid_graph', `the graph has a cycle through nodes ${cycle.join(' -> ')}; loops are built with the loop step`, {
      pointer: `${GRAPH_POINTER}/edges`,
    });
  }
  const loops = findLoopBodies(result.graph, GRAPH_POINTER);
  if (loops.violations.length > 0) throw invalidGraph(loops.violations);
  return result.graph;
}

/**
 * What an import left for the user (docs/import.md): every placeholder node, and every reference
 * still holding the nil UUID. `meta.pointer` is the same pointer the import report gave,
 * relative to the graph.
 */
function unfinishedImport(graph: Graph): ErrorItem[] {
  const items: ErrorItem[] = [];
  graph.nodes.forEach((node, index) => {
    const at = `/nodes/${index}`;
    if (node.type === 'placeholder') {
      const original = isPlainObject(node.config.original) ? node.config.original : {};
      const reason = typeof node.config.reason === 'string' ? ` (${node.config.reason})` : '';
      items.push({
        code: 'placeholder_node',
        detail: `node "${node.id}" is a placeholder for "${String(original.type)}"${reason}: replace it with a step or remove it before running the workflow`,
        source: { pointer: `${GRAPH_POINTER}${at}` },
        meta: { node_id: node.id, pointer: at },
      });
      return;
    }
    for (const path of unboundPaths(node.config, `${at}/config`)) {
      items.push({
        code: 'unbound_reference',
        detail: `node "${node.id}" still names no ${path.split('/').at(-1) === 'workflow_id' ? 'workflow' : 'resource'} (the import could not bind it): set it before running the workflow`,
        source: { pointer: `${GRAPH_POINTER}${path}` },
        meta: { node_id: node.id, pointer: path },
      });
    }
  });
  return items;
}

function unboundPaths(value: unknown, pointer: string): string[] {
  if (value === UNBOUND_ID) return [pointer];
  if (Array.isArray(value)) return value.flatMap((item, i) => unboundPaths(item, `${pointer}/${i}`));
  if (isPlainObject(value))
    return Object.entries(value).flatMap(([key, item]) => unboundPaths(item, `${pointer}/${escapePointerToken(key)}`));
  return [];
}
