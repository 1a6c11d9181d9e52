import type { Graph } from './graph-types.js';

/**
 * The node ids of one cycle in edge direction (`['a', 'b']` for a -> b -> a), or null when
 * the graph is acyclic. Iterative, so a long chain cannot overflow the stack; visiting nodes
 * and edges in array order makes the answer the same for the same graph.
 */
export function findCycle(graph: Graph): string[] | null {
  const successors = new Map<string, string[]>(graph.nodes.map((node) => [node.id, []]));
  for (const edge of graph.edges) {
    if (successors.has(edge.target)) successors.get(edge.source)?.push(edge.target);
  }

  const DONE = 2;
  const ON_PATH = 1;
  const state = new Map<string, number>();
  for (const start of successors.keys()) {
    if (state.has(start)) continue;
    const path: string[] = [start];
    const nextIndex: number[] = [0];
    state.set(start, ON_PATH);
    while (path.length > 0) {
      const depth = path.length - 1;
      const current = path[depth] as string;
      const next = successors.get(current)?.[nextIndex[depth] as number];
      if (next === undefined) {
        state.set(current, DONE);
        path.pop();
        nextIndex.pop();
        continue;
      }
      nextIndex[depth] = (nextIndex[depth] as number) + 1;
      const seen = state.get(next);
      if (seen === ON_PATH) return path.slice(path.indexOf(next));
      if (seen === undefined) {
        state.set(next, ON_PATH);
        path.push(next);
        nextIndex.push(0);
      }
    }
  }
  return null;
}
