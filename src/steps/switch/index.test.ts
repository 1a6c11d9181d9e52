import { describe, expect, it } from 'vitest';
import { validateGraph } from '../../graph/validate-graph.js';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { switchConfigIssues, switchPorts, switchStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(switchStep, mergeStepConfig(switchStep, config));
const cases = [
  { port: 'refund', equals: 'refund.created' },
  { port: 'paid', equals: { status: 'paid' } },
];

describe('switch step', () => {
  it('requires a value, which the default config leaves out', () => {
    expect(switchStep.defaultConfig).toEqual({ cases: [] });
    expect(check({})).toEqual([{ pointer: '/value', detail: 'config.value is required.' }]);
    expect(check({ value: '{{ trigger.body.type }}' })).toEqual([]);
  });

  it('accepts cases whose equals is any JSON value or an expression', () => {
    expect(check({ value: '{{ trigger.body.type }}', cases: [...cases, { port: 'other', equals: '{{ trigger.query.kind }}' }] })).toEqual(
      [],
    );
  });

  it('rejects a case without port or equals, a port that is not snake_case and unknown fields', () => {
    expect(
      check({ value: 1, cases: [{ equals: 1 }, { port: 'Big', equals: 2 }, { port: 'x', equals: 3, label: 'X' }, { port: 'y' }] }),
    ).toEqual([
      { pointer: '/cases/0/port', detail: 'config.cases[0].port is required.' },
      { pointer: '/cases/1/port', detail: 'config.cases[1].port must match the pattern ^[a-z][a-z0-9_]*$.' },
      { pointer: '/cases/2/label', detail: 'config.cases[2].label is not a known field.' },
      { pointer: '/cases/3/equals', detail: 'config.cases[3].equals is required.' },
    ]);
  });
});

describe('switchConfigIssues', () => {
  it('finds nothing wrong with unique ports', () => {
    expect(switchConfigIssues({ value: 1, cases })).toEqual([]);
  });

  it('rejects a repeated port, naming the case that has it first', () => {
    expect(switchConfigIssues({ value: 1, cases: [...cases, { port: 'refund', equals: 'x' }] })).toEqual([
      { pointer: '/cases/2/port', detail: 'config.cases[2].port "refund" is already used by config.cases[0].' },
    ]);
  });

  it('rejects the default and error ports, which the node has already', () => {
    expect(
      switchConfigIssues({
        value: 1,
        cases: [
          { port: 'default', equals: 1 },
          { port: 'error', equals: 2 },
        ],
      }),
    ).toEqual([
      { pointer: '/cases/0/port', detail: 'config.cases[0].port must not be "default": unmatched values leave through that port.' },
      {
        pointer: '/cases/1/port',
        detail: 'config.cases[1].port must not be "error": failures leave through that port with on_error "continue".',
      },
    ]);
  });
});

describe('switchPorts', () => {
  it('lists each case port in order, then default', () => {
    expect(switchPorts({ value: 1, cases })).toEqual(['refund', 'paid', 'default']);
    expect(switchPorts({ value: 1, cases: [] })).toEqual(['default']);
  });

  it('reads a malformed config without throwing', () => {
    expect(switchPorts({ cases: 'nope' })).toEqual(['default']);
    expect(switchPorts({ cases: [null, { port: 3 }, { port: 'a' }, { port: 'a' }, { port: 'default' }] })).toEqual(['a', 'default']);
  });
});

describe('switch nodes in a graph', () => {
  const node = (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    id: 'route',
    type: 'switch',
    config,
    ...extra,
  });
  const target = (id: string) => ({ id, type: 'set' });
  const edge = (port: string, to: string) => ({ source: 'route', source_port: port, target: to });

  it('accepts edges from each case port and from default', () => {
    const result = validateGraph({
      nodes: [node({ value: '{{ trigger.body.type }}', cases }), target('a'), target('b'), target('c')],
      edges: [edge('refund', 'a'), edge('paid', 'b'), edge('default', 'c')],
    });
    expect(result.ok).toBe(true);
  });

  it('rejects an edge from a port no case names, listing the node’s ports', () => {
    const result = validateGraph({ nodes: [node({ value: 1, cases }), target('a')], edges: [edge('out', 'a')] });
    expect(result).toEqual({
      ok: false,
      violations: [
        {
          pointer: '/data/graph/edges/0/source_port',
          code: 'unknown_port',
          detail: 'Node "route" (switch) has no out port "out"; its out ports are "refund", "paid", "default".',
        },
      ],
    });
  });

  it('adds the error port after the case ports with on_error continue', () => {
    const result = validateGraph({
      nodes: [node({ value: 1, cases }, { on_error: 'continue' }), target('a')],
      edges: [edge('error', 'a')],
    });
    expect(result.ok).toBe(true);
  });

  it('reports repeated case ports as config violations', () => {
    const result = validateGraph({ nodes: [node({ value: 1, cases: [...cases, { port: 'paid', equals: 2 }] })] });
    expect(result).toEqual({
      ok: false,
      violations: [
        {
          pointer: '/data/graph/nodes/0/config/cases/2/port',
          code: 'invalid_config',
          detail: 'config.cases[2].port "paid" is already used by config.cases[1].',
        },
      ],
    });
  });
});
