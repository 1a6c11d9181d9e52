import { describe, expect, it } from 'vitest';
import type { Graph, GraphNode } from './graph-types.js';
import { findCycle } from './validate-graph.js';

const node = (id: string): GraphNode => ({ id, type: 'code', config: {}, position: { x: 0, y: 0 } });
function graph(ids: string[], links: Array<[string, string]>): Graph {
  return {
    nodes: ids.map(node),
    edges: links.map(([source, target]) => ({ id: `${source}->${target}`, source, source_port: 'out', target, target_port: 'in' })),
  };
}

describe('findCycle', () => {
  it('returns null for an acyclic graph, diamonds included', () => {
    expect(
      findCycle(
        graph(
          ['a', 'b', 'c', 'd'],
          [
            ['a', 'b'],
            ['a', 'c'],
            ['b', 'd'],
            ['c', 'd'],
          ],
        ),
      ),
    ).toBeNull();
    expect(findCycle(graph([], []))).toBeNull();
  });

  it('returns the node ids of a cycle in edge order', () => {
    expect(
      findCycle(
        graph(
          ['start', 'a', 'b', 'c'],
          [
            ['start', 'a'],
            ['a', 'b'],
            ['b', 'c'],
            ['c', 'a'],
          ],
        ),
      ),
    ).toEqual(['a', 'b', 'c']);
  });

  it('finds a node linked to itself', () => {
    expect(
      findCycle(
        graph(
          ['a', 'b'],
          [
            ['a', 'b'],
            ['b', 'b'],
          ],
        ),
      ),
    ).toEqual(['b']);
  });

  it('handles a chain longer than the call stack would allow for recursion', () => {
    const ids = Array.from({ length: 20000 }, (_, i) => `n${i}`);
    const links = ids.slice(1).map((id, i) => [ids[i], id] as [string, string]);
    expect(findCycle(graph(ids, links))).toBeNull();
    expect(findCycle(graph(ids, [...links, ['n19999', 'n0']]))).toHaveLength(20000);
  });
});
