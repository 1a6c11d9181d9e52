import type { Graph, GraphEdge, GraphNode } from '../graph/graph-types.js';

/**
 * A graph prepared for running: nodes by id, incoming and outgoing edges per node. Built once
 * per snapshot and shared by every execution of it.
 */
export interface GraphPlan {
  graph: Graph;
  nodes: Map<string, GraphNode>;
  incoming: Map<string, GraphEdge[]>;
  outgoing: Map<string, GraphEdge[]>;
  /** Nodes without incoming edges, in graph order. */
  roots: string[];
  /** Graph order, for deterministic scheduling. */
  order: string[];
}

export function planGraph(graph: Graph): GraphPlan {
  const nodes = new Map(graph.nodes.map((node) => [node.id, node]));
  const incoming = new Map<string, GraphEdge[]>(graph.nodes.map((node) => [node.id, []]));
  const outgoing = new Map<string, GraphEdge[]>(graph.nodes.map((node) => [node.id, []]));
  for (const edge of graph.edges) {
    incoming.get(edge.target)?.push(edge);
    outgoing.get(edge.source)?.push(edge);
  }
  const order = graph.nodes.map((node) => node.id);
  return { graph, nodes, incoming, outgoing, roots: order.filter((id) => incoming.get(id)!.length === 0), order };
}
