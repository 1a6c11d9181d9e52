import { describe, expect, it } from 'vitest';
import type { Graph } from './graph-types.js';
import { LAYOUT_NODE_SIZE, layoutGraph } from './layout-graph.js';
import { validateGraph } from './validate-graph.js';

function graphOf(input: unknown): Graph {
  const result = validateGraph(input);
  if (!result.ok) throw new Error(JSON.stringify(result.violations));
  return result.graph;
}

// hook -> fetch -> (shape, save); shape -> respond. Nodes listed out of flow order on purpose.
const sample = graphOf({
  nodes: [
    { id: 'respond', type: 'respond_to_webhook' },
    { id: 'shape', type: 'code', name: 'Shape' },
    { id: 'hook', type: 'webhook' },
    { id: 'save', type: 'code' },
    { id: 'fetch', type: 'http', config: { url: 'https://x.test' }, position: { x: 999, y: 999 } },
  ],
  edges: [
    { source: 'hook', target: 'fetch' },
    { source: 'fetch', target: 'shape' },
    { source: 'fetch', target: 'save' },
    { source: 'shape', target: 'respond' },
  ],
});

const positionOf = (graph: Graph, id: string) => graph.nodes.find((n) => n.id === id)?.position ?? { x: NaN, y: NaN };

describe('layoutGraph', () => {
  it('keeps every node, in order, with only its position changed, and every edge', () => {
    const laid = layoutGraph(sample);
    expect(laid.nodes.map((n) => n.id)).toEqual(['respond', 'shape', 'hook', 'save', 'fetch']);
    expect(laid.nodes.map(({ position: _p, ...rest }) => rest)).toEqual(sample.nodes.map(({ position: _p, ...rest }) => rest));
    expect(laid.edges).toEqual(sample.edges);
  });

  it('places each target to the right of its source', () => {
    const laid = layoutGraph(sample);
    for (const edge of laid.edges) {
      expect(positionOf(laid, edge.target).x, `${edge.source} -> ${edge.target}`).toBeGreaterThanOrEqual(
        positionOf(laid, edge.source).x + LAYOUT_NODE_SIZE.width,
      );
    }
  });

  it('stacks siblings in one column without overlapping', () => {
    const laid = layoutGraph(sample);
    const shape = positionOf(laid, 'shape');
    const save = positionOf(laid, 'save');
    expect(shape.x).toBe(save.x);
    expect(Math.abs(shape.y - save.y)).toBeGreaterThanOrEqual(LAYOUT_NODE_SIZE.height);
  });

  it('gives integer, non-negative positions starting at the origin', () => {
    const laid = layoutGraph(sample);
    for (const { position } of laid.nodes) {
      expect(Number.isInteger(position.x) && Number.isInteger(position.y)).toBe(true);
    }
    expect(Math.min(...laid.nodes.map((n) => n.position.x))).toBe(0);
    expect(Math.min(...laid.nodes.map((n) => n.position.y))).toBe(0);
  });

  it('gives the same layout for the same graph every time', () => {
    const first = layoutGraph(sample);
    expect(layoutGraph(structuredClone(sample))).toEqual(first);
    expect(layoutGraph(first)).toEqual(first);
  });

  it('leaves its input untouched', () => {
    const before = structuredClone(sample);
    const laid = layoutGraph(sample);
    expect(sample).toEqual(before);
    expect(laid.nodes[0]?.config).not.toBe(sample.nodes[0]?.config);
  });

  it('lays out a cycle and an unconnected node without failing', () => {
    const cyclic = graphOf({
      nodes: [
        { id: 'a', type: 'code' },
        { id: 'b', type: 'code' },
        { id: 'lone', type: 'code' },
      ],
      edges: [
        { source: 'a', target: 'b' },
        { source: 'b', target: 'a' },
      ],
    });
    const laid = layoutGraph(cyclic);
    expect(laid.nodes).toHaveLength(3);
    expect(positionOf(laid, 'b').x).toBeGreaterThan(positionOf(laid, 'a').x);
  });

  it('keeps settings and annotations, which it does not lay out', () => {
    const annotations = [{ id: 'note', text: 'Read me', position: { x: 7, y: 8 } }];
    const laid = layoutGraph({ ...sample, settings: { concurrency_limit: 2 }, annotations });
    expect(laid.settings).toEqual({ concurrency_limit: 2 });
    expect(laid.annotations).toEqual(annotations);
  });

  it('returns an empty graph for an empty graph', () => {
    expect(layoutGraph({ nodes: [], edges: [] })).toEqual({ nodes: [], edges: [] });
  });
});
