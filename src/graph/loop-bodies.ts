import { LOOP_BODY_PORT } from '../steps/loop/index.js';
import type { Graph, GraphViolation } from './graph-types.js';

export interface LoopBodies {
  /** Body node ids per loop node id, in graph order. */
  bodies: Map<string, string[]>;
  violations: GraphViolation[];
}

/**
 * A loop's body is every node reachable from its `body` port. A body is entered only through
 * that port (an edge from elsewhere into a body node would make the node's readiness depend on
 * two runs at once), and loops do not nest: a body that needs a loop calls another workflow.
 * The edge back to the loop itself is a cycle, which `findCycle` reports.
 */
export function findLoopBodies(graph: Graph, pointerBase = '/data/graph'): LoopBodies {
  const outgoing = new Map<string, string[]>(graph.nodes.map((node) => [node.id, []]));
  for (const edge of graph.edges) outgoing.get(edge.source)?.push(edge.target);
  const order = new Map(graph.nodes.map((node, index) => [node.id, index]));
  const bodies = new Map<string, string[]>();
  const violations: GraphViolation[] = [];

  for (const loop of graph.nodes) {
    if (loop.type !== 'loop') continue;
    const body = new Set<string>();
    const queue = graph.edges.filter((e) => e.source === loop.id && e.source_port === LOOP_BODY_PORT).map((e) => e.target);
    while (queue.length > 0) {
      const id = queue.pop()!;
      if (id === loop.id || body.has(id)) continue;
      body.add(id);
      queue.push(...(outgoing.get(id) ?? []));
    }
    bodies.set(
      loop.id,
      [...body].sort((a, b) => order.get(a)! - order.get(b)!),
    );

    graph.nodes.forEach((node, index) => {
      if (node.type === 'loop' && body.has(node.id)) {
        violations.push({
          pointer: `${pointerBase}/nodes/${index}`,
          code: 'invalid_loop',
          detail: `Loop "${node.id}" is inside the body of loop "${loop.id}"; loops cannot be nested (call a workflow from the body instead).`,
        });
      }
    });
    graph.edges.forEach((edge, index) => {
      if (!body.has(edge.target) || body.has(edge.source)) return;
      if (edge.source === loop.id && edge.source_port === LOOP_BODY_PORT) return;
      violations.push({
        pointer: `${pointerBase}/edges/${index}`,
        code: 'invalid_loop',
        detail: `The edge from "${edge.source}" enters the body of loop "${loop.id}" at "${edge.target}"; a loop body is entered only through the loop's body port.`,
      });
    });
  }
  return { bodies, violations };
}
