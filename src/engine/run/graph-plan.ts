import type { Graph, GraphEdge, GraphNode } from '../../graph/graph-types.js';
import { findLoopBodies } from '../../graph/loop-bodies.js';
import { deepFreeze } from '../../lib/json.js';
import { LOOP_BODY_PORT } from '../../steps/loop/index.js';

/** The run settings a plan carries (from the graph's `settings`, defaults filled in). */
export interface PlanSettings {
  concurrencyLimit: number | null;
  savePayloads: boolean;
}

/**
 * A graph prepared for running: nodes by id, incoming and outgoing edges per node. Built once
 * per snapshot and shared by every execution of it. A loop's body is not part of the plan it
 * sits in: it is a plan of its own (`loops`), run once per item, whose only root is the loop
 * node itself (completed through its `body` port with the item as output).
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
  /** Each node's position in `order` (ready nodes run lowest first). */
  rank: Map<string, number>;
  /** Body plans by loop node id. */
  loops: Map<string, GraphPlan>;
  settings: PlanSettings;
}

export function planGraph(graph: Graph): GraphPlan {
  // Every execution of the snapshot shares the configs, and resolveConfig hands the parts that
  // hold no expression to step runtimes as they are: frozen, no run can change another's.
  for (const node of graph.nodes) deepFreeze(node.config);
  const settings: PlanSettings = {
    concurrencyLimit: graph.settings?.concurrency_limit ?? null,
    savePayloads: graph.settings?.save_step_payloads ?? true,
  };
  const { bodies } = findLoopBodies(graph);
  const inBody = new Set([...bodies.values()].flat());
  const outer = graph.nodes.filter((node) => !inBody.has(node.id));
  const outerIds = new Set(outer.map((node) => node.id));
  const outerEdges = graph.edges.filter(
    (edge) => outerIds.has(edge.source) && outerIds.has(edge.target) && !(bodies.has(edge.source) && edge.source_port === LOOP_BODY_PORT),
  );
  const loops = new Map<string, GraphPlan>();
  for (const [loopId, bodyIds] of bodies) {
    const members = new Set([loopId, ...bodyIds]);
    const nodes = graph.nodes.filter((node) => members.has(node.id));
    const edges = graph.edges.filter((edge) => members.has(edge.target) && edge.target !== loopId && members.has(edge.source));
    loops.set(loopId, buildPlan({ nodes, edges }, new Map(), settings));
  }
  return buildPlan({ nodes: outer, edges: outerEdges, ...(graph.settings ? { settings: graph.settings } : {}) }, loops, settings);
}

function buildPlan(graph: Graph, loops: Map<string, GraphPlan>, settings: PlanSettings): GraphPlan {
  const nodes = new Map(graph.nodes.map((node) => [node.id, node]));
  const incoming = new Map<string, GraphEdge[]>(graph.nodes.map((node) => [node.id, []]));
  const outgoing = new Map<string, GraphEdge[]>(graph.nodes.map((node) => [node.id, []]));
  for (const edge of graph.edges) {
    incoming.get(edge.target)?.push(edge);
    outgoing.get(edge.source)?.push(edge);
  }
  const order = graph.nodes.map((node) => node.id);
  const rank = new Map(order.map((id, index) => [id, index]));
  return { graph, nodes, incoming, outgoing, roots: order.filter((id) => incoming.get(id)!.length === 0), order, rank, loops, settings };
}
