import { describe, expect, it } from 'vitest';
import type { GraphViolation } from './graph-types.js';
import { validateGraph } from './validate-graph.js';

const hook = { id: 'hook', type: 'webhook', position: { x: 0, y: 0 } };
const fetch = { id: 'fetch', type: 'http', config: { url: 'https://api.example.com' }, position: { x: 300, y: 0 } };
const shape = { id: 'shape', type: 'code', position: { x: 600, y: 0 } };

function violationsOf(input: unknown, pointerBase?: string): GraphViolation[] {
  const result = validateGraph(input, pointerBase);
  if (result.ok) throw new Error('expected violations, got a valid graph');
  return result.violations;
}

function codesAndPointers(input: unknown): Array<[string, string]> {
  return violationsOf(input).map((v) => [v.code, v.pointer]);
}

describe('validateGraph: normalisation', () => {
  it('fills in missing edges, ports, edge ids, positions and configs', () => {
    const result = validateGraph({
      nodes: [
        { id: 'hook', type: 'webhook' },
        { id: 'shape', type: 'code' },
      ],
      edges: [{ source: 'hook', target: 'shape' }],
    });
    expect(result).toEqual({
      ok: true,
      graph: {
        nodes: [
          {
            id: 'hook',
            type: 'webhook',
            config: { response_mode: 'immediate', verification: { method: 'bearer' }, timeout_ms: 30000, max_body_bytes: 1048576 },
            position: { x: 0, y: 0 },
          },
          { id: 'shape', type: 'code', config: { code: 'return input;' }, position: { x: 0, y: 0 } },
        ],
        edges: [{ id: 'hook:out->shape:in', source: 'hook', source_port: 'out', target: 'shape', target_port: 'in' }],
      },
    });
  });

  it('treats missing edges as none and keeps an explicit edge id', () => {
    expect(validateGraph({ nodes: [hook] })).toMatchObject({ ok: true, graph: { edges: [] } });
    const result = validateGraph({ nodes: [hook, shape], edges: [{ id: 'e1', source: 'hook', target: 'shape' }] });
    expect(result.ok && result.graph.edges[0]?.id).toBe('e1');
  });

  it('merges a node config over its step defaults, the node winning', () => {
    const result = validateGraph({ nodes: [{ ...fetch, config: { url: 'https://x.test', method: 'POST' } }] });
    expect(result.ok && result.graph.nodes[0]?.config).toEqual({
      method: 'POST',
      url: 'https://x.test',
      headers: {},
      query: {},
      timeout_ms: 30000,
    });
  });

  it('keeps name, disabled, retry and on_error', () => {
    const retry = { max_attempts: 3, backoff_ms: 500, backoff: 'exponential', max_backoff_ms: 5000 };
    const node = { ...fetch, name: 'Fetch order', disabled: true, retry, on_error: 'continue' };
    const result = validateGraph({ nodes: [node] });
    expect(result.ok && result.graph.nodes[0]).toMatchObject({
      name: 'Fetch order',
      disabled: true,
      retry: node.retry,
      on_error: 'continue',
    });
  });

  it('accepts a config value that is exactly one expression where a number belongs', () => {
    const respond = { id: 'respond', type: 'respond_to_webhook', config: { status: '{{ nodes.fetch.status }}' } };
    expect(validateGraph({ nodes: [respond] }).ok).toBe(true);
  });

  it('allows cycles, which only activation rejects', () => {
    const edges = [
      { source: 'fetch', target: 'shape' },
      { source: 'shape', target: 'fetch' },
    ];
    expect(validateGraph({ nodes: [fetch, shape], edges }).ok).toBe(true);
  });
});

describe('validateGraph: graph shape and limits', () => {
  it('rejects a graph that is not an object, without nodes, or with unknown members', () => {
    expect(codesAndPointers([])).toEqual([['invalid_graph', '/data/graph']]);
    expect(codesAndPointers({ edges: [] })).toEqual([['invalid_graph', '/data/graph/nodes']]);
    expect(codesAndPointers({ nodes: [], edges: {} })).toEqual([['invalid_graph', '/data/graph/edges']]);
    expect(codesAndPointers({ nodes: [], viewport: {} })).toEqual([['invalid_graph', '/data/graph/viewport']]);
  });

  it('rejects more than 2000 nodes or 5000 edges', () => {
    const nodes = Array.from({ length: 2001 }, (_, i) => ({ id: `n${i}`, type: 'code' }));
    const edges = Array.from({ length: 5001 }, () => ({ source: 'n0', target: 'n1' }));
    expect(violationsOf({ nodes, edges })).toEqual([
      { pointer: '/data/graph/nodes', code: 'graph_too_large', detail: 'A graph may have at most 2000 nodes; this one has 2001.' },
      { pointer: '/data/graph/edges', code: 'graph_too_large', detail: 'A graph may have at most 5000 edges; this one has 5001.' },
    ]);
    expect(validateGraph({ nodes: nodes.slice(0, 2000) }).ok).toBe(true);
  });

  it('keeps valid settings and points at each invalid one', () => {
    const nodes = [{ id: 'a', type: 'webhook' }];
    const ok = validateGraph({ nodes, settings: { concurrency_limit: 2, save_step_payloads: false } });
    expect(ok.ok && ok.graph.settings).toEqual({ concurrency_limit: 2, save_step_payloads: false });
    expect(violationsOf({ nodes, settings: { concurrency_limit: 0, save_step_payloads: 'no', colour: 'red' } })).toEqual([
      {
        pointer: '/data/graph/settings/concurrency_limit',
        code: 'invalid_settings',
        detail: 'concurrency_limit must be a whole number from 1 to 1000, or null for no limit.',
      },
      { pointer: '/data/graph/settings/save_step_payloads', code: 'invalid_settings', detail: 'save_step_payloads must be a boolean.' },
      {
        pointer: '/data/graph/settings/colour',
        code: 'invalid_settings',
        detail: 'Setting "colour" is not known; the settings are concurrency_limit and save_step_payloads.',
      },
    ]);
    expect(violationsOf({ nodes, settings: [] })).toEqual([
      { pointer: '/data/graph/settings', code: 'invalid_settings', detail: 'settings must be an object.' },
    ]);
  });

  it('keeps annotations and points at each invalid one', () => {
    const nodes = [{ id: 'a', type: 'webhook' }];
    const note = { id: 'note', text: 'Read me', position: { x: 1, y: 2 }, size: { width: 300, height: 100 }, color: 4, name: 'Sticky' };
    const ok = validateGraph({ nodes, annotations: [note] });
    expect(ok.ok && ok.graph.annotations).toEqual([note]);
    expect(
      violationsOf({ nodes, annotations: [note, { ...note }, { id: 'b c', text: 5, position: { x: 'x' }, pinned: true }] }).map((v) => [
        v.code,
        v.pointer,
      ]),
    ).toEqual([
      ['invalid_annotation', '/data/graph/annotations/1/id'],
      ['invalid_annotation', '/data/graph/annotations/2/id'],
      ['invalid_annotation', '/data/graph/annotations/2/text'],
      ['invalid_annotation', '/data/graph/annotations/2/position'],
      ['invalid_annotation', '/data/graph/annotations/2/pinned'],
    ]);
    expect(violationsOf({ nodes, annotations: {} })).toEqual([
      { pointer: '/data/graph/annotations', code: 'invalid_annotation', detail: 'annotations must be an array.' },
    ]);
  });

  it('addresses violations under the pointer base it is given', () => {
    expect(violationsOf({ nodes: [{ id: 'a', type: 'nope' }] }, '/data/attributes/graph')[0]?.pointer).toBe(
      '/data/attributes/graph/nodes/0/type',
    );
  });
});

describe('validateGraph: nodes', () => {
  it('rejects node ids that are missing, empty, too long or contain other characters', () => {
    const nodes = [
      { type: 'code' },
      { id: '', type: 'code' },
      { id: 'a'.repeat(101), type: 'code' },
      { id: 'a b', type: 'code' },
      { id: 7, type: 'code' },
    ];
    expect(violationsOf({ nodes })).toEqual([
      { pointer: '/data/graph/nodes/0/id', code: 'invalid_node', detail: 'Node id is required.' },
      ...[1, 2, 3, 4].map((i) => ({
        pointer: `/data/graph/nodes/${i}/id`,
        code: 'invalid_node',
        detail: 'Node id must be 1 to 100 letters, digits, "_" or "-".',
      })),
    ]);
    expect(validateGraph({ nodes: [{ id: 'A_z-9'.padEnd(100, 'x'), type: 'code' }] }).ok).toBe(true);
  });

  it('rejects wrongly typed node fields and unknown node properties', () => {
    const node = {
      id: 'a',
      type: 'code',
      name: 5,
      config: [],
      position: { x: '1', y: 2, z: 3 },
      disabled: 'no',
      on_error: 'ignore',
      color: 'red',
    };
    expect(codesAndPointers({ nodes: [node, 'node', { id: 'b' }] })).toEqual([
      ['invalid_node', '/data/graph/nodes/0/name'],
      ['invalid_node', '/data/graph/nodes/0/position/x'],
      ['invalid_node', '/data/graph/nodes/0/position/z'],
      ['invalid_node', '/data/graph/nodes/0/disabled'],
      ['invalid_node', '/data/graph/nodes/0/on_error'],
      ['invalid_node', '/data/graph/nodes/0/config'],
      ['invalid_node', '/data/graph/nodes/0/color'],
      ['invalid_node', '/data/graph/nodes/1'],
      ['invalid_node', '/data/graph/nodes/2/type'],
    ]);
  });

  it('reports a type that names no step', () => {
    expect(violationsOf({ nodes: [shape, { id: 'x', type: 'ftp' }] })).toEqual([
      { pointer: '/data/graph/nodes/1/type', code: 'unknown_step_type', detail: 'There is no step type "ftp".' },
    ]);
  });

  it('reports a repeated node id at its second occurrence', () => {
    expect(violationsOf({ nodes: [shape, fetch, { ...shape }] })).toEqual([
      { pointer: '/data/graph/nodes/2/id', code: 'duplicate_node_id', detail: 'Node id "shape" is already used by /data/graph/nodes/0.' },
    ]);
  });

  it('reports each config error at its field, a missing field included', () => {
    const nodes = [
      { id: 'fetch', type: 'http', config: { method: 'FETCH' } },
      { id: 'hook', type: 'webhook', config: { verification: { method: 'hmac', format: 'plain' } } },
    ];
    expect(violationsOf({ nodes })).toEqual([
      { pointer: '/data/graph/nodes/0/config/url', code: 'invalid_config', detail: 'config.url is required.' },
      {
        pointer: '/data/graph/nodes/0/config/method',
        code: 'invalid_config',
        detail: 'config.method must be one of "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS".',
      },
      {
        pointer: '/data/graph/nodes/1/config/verification/header',
        code: 'invalid_config',
        detail: 'config.verification.header is required.',
      },
    ]);
  });
});

describe('validateGraph: retry', () => {
  const withRetry = (retry: unknown) => violationsOf({ nodes: [{ ...shape, retry }] });

  it('states each broken limit with its exact message', () => {
    expect(withRetry({ max_attempts: 26, backoff_ms: -1, backoff: 'linear', max_backoff_ms: 1.5 })).toEqual([
      {
        pointer: '/data/graph/nodes/0/retry/max_attempts',
        code: 'invalid_retry',
        detail: 'retry.max_attempts must be an integer from 1 to 25.',
      },
      {
        pointer: '/data/graph/nodes/0/retry/backoff_ms',
        code: 'invalid_retry',
        detail: 'retry.backoff_ms must be an integer from 0 to 86400000.',
      },
      { pointer: '/data/graph/nodes/0/retry/backoff', code: 'invalid_retry', detail: 'retry.backoff must be "fixed" or "exponential".' },
      {
        pointer: '/data/graph/nodes/0/retry/max_backoff_ms',
        code: 'invalid_retry',
        detail: 'retry.max_backoff_ms must be an integer from 0 to 86400000.',
      },
    ]);
    expect(withRetry({ max_attempts: 0, backoff_ms: 86400001, backoff: 'fixed' }).map((v) => v.detail)).toEqual([
      'retry.max_attempts must be an integer from 1 to 25.',
      'retry.backoff_ms must be an integer from 0 to 86400000.',
    ]);
  });

  it('requires max_backoff_ms to be no less than backoff_ms', () => {
    expect(withRetry({ max_attempts: 3, backoff_ms: 1000, backoff: 'exponential', max_backoff_ms: 999 })).toEqual([
      {
        pointer: '/data/graph/nodes/0/retry/max_backoff_ms',
        code: 'invalid_retry',
        detail: 'retry.max_backoff_ms must be an integer from 1000 (backoff_ms) to 86400000.',
      },
    ]);
  });

  it('requires max_attempts, backoff_ms and backoff and rejects other fields', () => {
    expect(withRetry({ attempts: 3 })).toEqual([
      { pointer: '/data/graph/nodes/0/retry/max_attempts', code: 'invalid_retry', detail: 'retry.max_attempts is required.' },
      { pointer: '/data/graph/nodes/0/retry/backoff_ms', code: 'invalid_retry', detail: 'retry.backoff_ms is required.' },
      { pointer: '/data/graph/nodes/0/retry/backoff', code: 'invalid_retry', detail: 'retry.backoff is required.' },
      { pointer: '/data/graph/nodes/0/retry/attempts', code: 'invalid_retry', detail: 'retry.attempts is not a known field.' },
    ]);
    expect(withRetry(3)).toEqual([
      {
        pointer: '/data/graph/nodes/0/retry',
        code: 'invalid_retry',
        detail: 'retry must be an object with max_attempts, backoff_ms and backoff.',
      },
    ]);
  });
});

describe('validateGraph: edges', () => {
  it('reports an edge whose source or target names no node', () => {
    expect(
      violationsOf({
        nodes: [shape],
        edges: [
          { source: 'ghost', target: 'shape' },
          { source: 'shape', target: 'nowhere' },
        ],
      }),
    ).toEqual([
      { pointer: '/data/graph/edges/0/source', code: 'dangling_edge', detail: 'There is no node "ghost".' },
      { pointer: '/data/graph/edges/1/target', code: 'dangling_edge', detail: 'There is no node "nowhere".' },
    ]);
  });

  it('reports ports the step does not have, including any in port of a trigger', () => {
    const edges = [
      { source: 'fetch', source_port: 'true', target: 'shape' },
      { source: 'fetch', target: 'shape', target_port: 'data' },
      { source: 'shape', target: 'hook' },
    ];
    expect(violationsOf({ nodes: [hook, fetch, shape], edges })).toEqual([
      {
        pointer: '/data/graph/edges/0/source_port',
        code: 'unknown_port',
        detail: 'Node "fetch" (http) has no out port "true"; its out ports are "out".',
      },
      {
        pointer: '/data/graph/edges/1/target_port',
        code: 'unknown_port',
        detail: 'Node "shape" (code) has no in port "data"; its in ports are "in".',
      },
      {
        pointer: '/data/graph/edges/2/target_port',
        code: 'unknown_port',
        detail: 'Node "hook" (webhook) is a trigger and has no in port.',
      },
    ]);
  });

  it('offers the error port only on nodes with on_error "continue"', () => {
    const edges = [{ source: 'fetch', source_port: 'error', target: 'shape' }];
    expect(violationsOf({ nodes: [fetch, shape], edges })).toEqual([
      {
        pointer: '/data/graph/edges/0/source_port',
        code: 'unknown_port',
        detail: 'Node "fetch" (http) has no out port "error"; the error port exists only with on_error "continue".',
      },
    ]);
    expect(validateGraph({ nodes: [{ ...fetch, on_error: 'continue' }, shape], edges }).ok).toBe(true);
    expect(codesAndPointers({ nodes: [{ ...fetch, on_error: 'fail' }, shape], edges })).toEqual([
      ['unknown_port', '/data/graph/edges/0/source_port'],
    ]);
  });

  it('reports a repeated edge, defaults included, and a reused edge id', () => {
    const edges = [
      { source: 'hook', target: 'shape' },
      { id: 'again', source: 'hook', source_port: 'out', target: 'shape', target_port: 'in' },
      { id: 'hook:out->shape:in', source: 'hook', target: 'fetch' },
    ];
    expect(violationsOf({ nodes: [hook, fetch, shape], edges })).toEqual([
      { pointer: '/data/graph/edges/1', code: 'duplicate_edge', detail: 'This edge repeats /data/graph/edges/0.' },
      {
        pointer: '/data/graph/edges/2/id',
        code: 'duplicate_edge_id',
        detail: 'Edge id "hook:out->shape:in" is already used by /data/graph/edges/0.',
      },
    ]);
  });

  it('rejects malformed edges and unknown edge properties', () => {
    const edges = ['a->b', { source: 1, target: 'shape', target_port: '' }, { source: 'hook', target: 'shape', label: 'x' }];
    expect(codesAndPointers({ nodes: [hook, shape], edges })).toEqual([
      ['invalid_edge', '/data/graph/edges/0'],
      ['invalid_edge', '/data/graph/edges/1/source'],
      ['invalid_edge', '/data/graph/edges/1/target_port'],
      ['invalid_edge', '/data/graph/edges/2/label'],
    ]);
  });

  it('does not check ports of a node whose type is unknown, which is reported once on the node', () => {
    expect(
      codesAndPointers({ nodes: [{ id: 'x', type: 'ftp' }, shape], edges: [{ source: 'x', source_port: 'any', target: 'shape' }] }),
    ).toEqual([['unknown_step_type', '/data/graph/nodes/0/type']]);
  });

  it('lists node violations before edge violations, each in index order', () => {
    const input = { nodes: [shape, { id: 'b', type: 'nope' }, { id: 'c', type: 'http' }], edges: [{ source: 'ghost', target: 'shape' }] };
    expect(codesAndPointers(input)).toEqual([
      ['unknown_step_type', '/data/graph/nodes/1/type'],
      ['invalid_config', '/data/graph/nodes/2/config/url'],
      ['dangling_edge', '/data/graph/edges/0/source'],
    ]);
  });
});
