import dagre from '@dagrejs/dagre';
import type { Graph } from './graph-types.js';

/**
 * Sizes the canvas draws a node at; dagre needs them to keep boxes apart. Positions are the
 * node's top-left corner, as canvases place them, so the centres dagre computes are shifted by
 * half a box.
 */
export const LAYOUT_NODE_SIZE = Object.freeze({ width: 240, height: 80 });
const RANK_GAP = 80;
const NODE_GAP = 40;

/**
 * Lays the graph out left to right in layers (sources left, their targets further right) and
 * returns a copy with integer positions; nothing but positions changes. Dagre's result depends
 * only on insertion order, which follows the arrays, so the same graph always gets the same
 * layout. Edges naming unknown nodes are ignored, as are cycles (dagre breaks them itself).
 */
export function layoutGraph(graph: Graph): Graph {
  const g = new dagre.graphlib.Graph({ directed: true, multigraph: true });
  g.setGraph({ rankdir: 'LR', ranksep: RANK_GAP, nodesep: NODE_GAP, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const node of graph.nodes) {
    g.setNode(node.id, { width: LAYOUT_NODE_SIZE.width, height: LAYOUT_NODE_SIZE.height });
  }
  for (const edge of graph.edges) {
    if (g.hasNode(edge.source) && g.hasNode(edge.target)) g.setEdge(edge.source, edge.target, {}, edge.id);
  }
  dagre.layout(g);

  return {
    // Settings and annotations are not laid out; they travel with the graph unchanged.
    ...graph,
    nodes: graph.nodes.map((node) => {
      const placed = g.node(node.id);
      return {
        ...structuredClone(node),
        position: {
          x: Math.round(placed.x - LAYOUT_NODE_SIZE.width / 2),
          y: Math.round(placed.y - LAYOUT_NODE_SIZE.height / 2),
        },
      };
    }),
    edges: graph.edges.map((edge) => ({ ...edge })),
  };
}
