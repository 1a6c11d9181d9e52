import { describe, expect, it } from 'vitest';
import { DocumentProblems } from '../import-errors.js';
import { droppedConnectionRequirement, readConnections } from './n8n-connections.js';

const nodes = [
  { name: 'A', id: 'id-a' },
  { name: 'B', id: 'id-b' },
  { name: 'C', id: 'shared' },
  { name: 'D', id: 'shared' },
];
const to = (...names: string[]) => names.map((node) => ({ node, type: 'main', index: 0 }));

function read(raw: Record<string, unknown>, withNodes: Array<{ name: string; id: string | null }> = nodes) {
  const problems = new DocumentProblems();
  const result = readConnections(raw, withNodes, '/data/document/connections', problems);
  return { ...result, problems: problems.items.map((i) => [(i.source as { pointer: string }).pointer, i.detail]) };
}

describe('readConnections', () => {
  it('reads keys and targets by name, then by id, into names', () => {
    const { connections, dropped, problems } = read({ 'id-a': { main: [to('id-b'), null] }, B: { main: [to('A')] } });
    expect(connections).toEqual({ A: { main: [to('B'), []] }, B: { main: [to('A')] } });
    expect([dropped, problems]).toEqual([[], []]);
  });

  it('merges a node keyed by name and by id, each target once', () => {
    const { connections } = read({ A: { main: [to('B')] }, 'id-a': { main: [to('id-b'), to('C')], ai_tool: [to('B')] } });
    expect(connections).toEqual({ A: { main: [to('B'), to('C')], ai_tool: [to('B')] } });
  });

  it('reads a name that is also an id as the name, and an id several nodes share as no node', () => {
    const clash = [...nodes, { name: 'id-b', id: null }];
    const { connections, dropped } = read({ A: { main: [to('id-b', 'shared')] } }, clash);
    expect(connections).toEqual({ A: { main: [to('id-b')] } });
    expect(dropped).toEqual([
      { documentPointer: '/data/document/connections/A/main/0/1/node', reference: 'shared', from: { name: 'A', type: 'main', output: 0 } },
    ]);
  });

  it('drops a key naming no node without reading it, and still refuses what is malformed', () => {
    const { connections, dropped, problems } = read({ 'no/where': 'not even an object', B: { main: [[{ index: 0 }]], ai: 'x' } });
    expect(connections).toEqual({ B: { main: [[]] } });
    expect(dropped).toEqual([{ documentPointer: '/data/document/connections/no~1where', reference: 'no/where', from: null }]);
    expect(problems).toEqual([
      ['/data/document/connections/B/main/0/0', 'a connection target needs "node"'],
      ['/data/document/connections/B/ai', 'connections of a type must be a list with one entry per output'],
    ]);
  });

  it('keeps a node named __proto__ as an own member, never touching the prototype', () => {
    const { connections } = read(JSON.parse('{"__proto__": {"__proto__": [[{"node": "A"}]]}}'), [
      { name: '__proto__', id: null },
      ...nodes,
    ]);
    expect(Object.getOwnPropertyNames(connections)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(connections, '__proto__')?.value).toEqual(
      JSON.parse('{"__proto__": [[{"node": "A", "type": "__proto__", "index": 0}]]}'),
    );
    expect(({} as Record<string, unknown>).__proto__).toBe(Object.prototype);
  });
});

describe('droppedConnectionRequirement', () => {
  it('points at the node the connection left, else at the edges', () => {
    const indexOf = new Map([['A', 3]]);
    const target = { documentPointer: '/x/A/main/1/0/node', reference: 'Ghost', from: { name: 'A', type: 'main', output: 1 } };
    expect(droppedConnectionRequirement(target, indexOf)).toMatchObject({ pointer: '/nodes/3', n8n_node: 'Ghost', resource: 'node' });
    expect(droppedConnectionRequirement({ ...target, from: { ...target.from, name: 'Sticky' } }, indexOf).pointer).toBe('/edges');
    expect(droppedConnectionRequirement({ documentPointer: '/x/Ghost', reference: 'Ghost', from: null }, indexOf)).toEqual({
      pointer: '/edges',
      detail: 'the n8n connections keyed "Ghost" were dropped: the key names no node of the workflow, by name or by id',
      resource: 'node',
      n8n_node: 'Ghost',
      document_pointer: '/x/Ghost',
    });
  });
});
