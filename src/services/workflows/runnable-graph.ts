import { AppError } from '../../errors/app-error.js';
import type { Graph, GraphViolation } from '../../graph/graph-types.js';
import { findCycle, validateGraph } from '../../graph/validate-graph.js';
import { findLoopBodies } from '../../graph/loop-bodies.js';

/** Graph violations as one 422 `invalid_graph`, each with its rule's code and pointer. */
export function invalidGraph(violations: GraphViolation[]): AppError {
  return AppError.many('invalid_graph', violations.map((v) => ({ code: v.code, detail: v.detail, source: { pointer: v.pointer } })));
}

/**
 * A stored canvas checked for running (activation, draft runs): valid against the step catalog,
 * not empty, acyclic, and with well-formed loop bodies. Errors point into the workflow's `graph` attribute.
 */
export function runnableGraph(canvas: string): Graph {
  const result = validateGraph(JSON.parse(canvas), '/data/attributes/graph');
  if (!result.ok) throw invalidGraph(result.violations);
  if (result.graph.nodes.length === 0) {
    throw new AppError('invalid_graph', 'the canvas is empty: push a graph with PUT /workflows/:id/graph first', { pointer: '/data/attributes/graph/nodes' });
  }
  const cycle = findCycle(result.graph);
  if (cycle) {
    throw new AppError('invalid_graph', `the graph has a cycle through nodes ${cycle.join(' -> ')}; loops are built with the loop step`, { pointer: '/data/attributes/graph/edges' });
  }
  const loops = findLoopBodies(result.graph, '/data/attributes/graph');
  if (loops.violations.length > 0) throw invalidGraph(loops.violations);
  return result.graph;
}
