import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { readSimplePath } from './expression-paths.js';
import { toJson, type ExpressionScope } from './expressions.js';

// The fast path must give exactly what JSONata gives: every case is evaluated both ways.
const nodes = JSON.parse(
  JSON.stringify({
    shape: { seen: { order: 42, items: ['a', 'b'] } },
    deep: { a: { b: { c: 'end', n: 0, f: false, nul: null } } },
    arr: [{ x: 1 }, { x: [2, 3] }],
    nested: { list: [1, 2], objects: [{ id: 'p' }, { id: 'q' }] },
    str: 'text',
    num: 7,
    nul: null,
    empty: {},
  }),
);
// Own keys that are also Object.prototype's names, as JSON.parse makes them.
nodes.tricky = JSON.parse('{"__proto__": {"polluted": true}, "constructor": "own", "toString": 1}');

const scopes: Record<string, ExpressionScope> = {
  full: {
    trigger: { method: 'POST', headers: { 'content-type': 'application/json' }, query: {}, body: { order: 42 } },
    nodes,
    execution: { id: 'e1' },
    workflow: { id: 'w1' },
    input: { seen: { order: 42 }, list: [1] },
    item: { sku: 'a' },
    index: 3,
  },
  bare: { trigger: null, nodes: {}, execution: { id: 'e2' }, workflow: { id: 'w2' } },
  primitiveInput: { trigger: 'raw', nodes: {}, execution: {}, workflow: {}, input: 5, item: null, index: null },
};

const expressions = [
  'nodes',
  'nodes.shape',
  'nodes.shape.seen',
  'nodes.shape.seen.order',
  'nodes.shape.seen.items',
  'nodes.shape.seen.items.x',
  'nodes.deep.a.b.c',
  'nodes.deep.a.b.n',
  'nodes.deep.a.b.f',
  'nodes.deep.a.b.nul',
  'nodes.deep.a.b.nul.x',
  'nodes.deep.a.missing.c',
  'nodes.arr',
  'nodes.arr.x',
  'nodes.nested.list',
  'nodes.nested.objects.id',
  'nodes.str',
  'nodes.str.length',
  'nodes.num.x',
  'nodes.nul',
  'nodes.nul.x',
  'nodes.empty',
  'nodes.empty.x',
  'nodes.missing',
  'nodes.missing.deeper.still',
  'nodes.tricky',
  'nodes.tricky.constructor',
  'nodes.tricky.toString',
  'nodes.tricky.__proto__',
  'nodes.tricky.__proto__.polluted',
  'nodes.shape.constructor',
  'nodes.shape.toString',
  'nodes.shape.hasOwnProperty',
  'trigger',
  'trigger.body',
  'trigger.body.order',
  'trigger.headers',
  'trigger.method',
  'trigger.method.x',
  'input',
  'input.seen',
  'input.seen.order',
  'input.list',
  'input.missing',
  'item',
  'item.sku',
  'index',
  'execution.id',
  'workflow.id',
  'unknown',
  'unknown.x',
  '_x',
  'Nodes',
  'true',
  'false',
  'null',
  'and',
  'nodes.and',
  'nodes.in',
  'nodes.true',
];

async function viaJsonata(source: string, scope: ExpressionScope): Promise<unknown> {
  // The bindings expressions.ts hands JSONata, as input and as variables.
  const bindings = {
    trigger: scope.trigger,
    nodes: scope.nodes,
    execution: scope.execution,
    workflow: scope.workflow,
    input: scope.input ?? null,
    item: scope.item ?? null,
    index: scope.index ?? null,
  };
  return toJson(await jsonata(source).evaluate(bindings, bindings));
}

describe('readSimplePath', () => {
  for (const [scopeName, scope] of Object.entries(scopes)) {
    it(`agrees with JSONata on every path it reads (${scopeName} scope)`, async () => {
      for (const source of expressions) {
        const read = readSimplePath(source, scope);
        if (read === null) continue;
        expect(toJson(read.value), `${source} in the ${scopeName} scope`).toEqual(await viaJsonata(source, scope));
      }
    });
  }

  it('reads the common forms itself, including missing and inherited names', () => {
    const read = (source: string) => readSimplePath(source, scopes.full!);
    for (const source of [
      'nodes.shape',
      'nodes.shape.seen.order',
      'trigger.body.order',
      'input.seen',
      'item.sku',
      'index',
      'nodes.missing.deeper.still',
      'nodes.str.length',
      'nodes.shape.toString',
      'nodes.tricky.__proto__',
    ]) {
      expect(read(source), source).not.toBeNull();
    }
    expect(read('nodes.shape.toString')!.value).toBeUndefined();
    expect(read('nodes.tricky.__proto__')!.value).toEqual({ polluted: true });
  });

  it('leaves arrays, operators, literals, variables and quoted names to JSONata', () => {
    for (const source of [
      'nodes.arr',
      'nodes.arr.x',
      'nodes.shape.seen.items',
      'nodes.nested.objects.id',
      'true',
      'null',
      'and',
      'nodes.in',
      '$nodes.shape',
      'nodes.`shape`',
      'nodes.shape + 1',
      'nodes[0]',
      'nodes.shape.seen.order > 1',
      '$count(nodes.arr)',
      'nodes . shape',
    ]) {
      expect(readSimplePath(source, scopes.full!), source).toBeNull();
    }
  });
});
