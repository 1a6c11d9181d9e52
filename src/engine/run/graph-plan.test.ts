import { describe, expect, it } from 'vitest';
import type { Graph } from '../../graph/graph-types.js';
import { planGraph } from './graph-plan.js';

describe('planGraph', () => {
  it('plans freeze every node config, so no run can change what the next one sees', () => {
    const graph = {
      nodes: [{ id: 'a', type: 'code', config: { code: 'return 1;', nested: { list: [1] } } }],
      edges: [],
    } as unknown as Graph;
    const plan = planGraph(graph);
    const config = plan.nodes.get('a')!.config as { nested: { list: number[] } };
    expect(Object.isFrozen(config) && Object.isFrozen(config.nested) && Object.isFrozen(config.nested.list)).toBe(true);
    expect(() => config.nested.list.push(2)).toThrow(TypeError);
  });
});
