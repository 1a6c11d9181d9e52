import { describe, expect, it } from 'vitest';
import { compiledExpressionCount, evaluateExpression, resolveConfig, type ExpressionScope } from './expressions.js';
import { NonRetriableError } from '../step-errors.js';
import { deepFreeze } from '../../lib/json.js';

const scope: ExpressionScope = {
  trigger: { method: 'POST', headers: {}, query: {}, body: { id: 42, name: 'Ada', tags: ['a', 'b'], paid: true } },
  nodes: {
    fetch: {
      status: 200,
      body: {
        id: 7,
        items: [
          { sku: 'x', qty: 2 },
          { sku: 'y', qty: 3 },
        ],
      },
    },
  },
  execution: { id: 'exec-1' },
  workflow: { id: 'wf-1' },
  input: { total: 5 },
  item: null,
  index: null,
};

const resolve = (config: Record<string, unknown>, s: ExpressionScope = scope) => resolveConfig(config, s, { nodeId: 'shape' });

async function failure(promise: Promise<unknown>): Promise<NonRetriableError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(NonRetriableError);
  return error as NonRetriableError;
}

describe('resolveConfig: a value that is only an expression keeps the result’s type', () => {
  it('yields numbers, objects, booleans and arrays as they are', async () => {
    expect(
      await resolve({
        status: '{{ nodes.fetch.status }}',
        body: '{{ nodes.fetch.body.items[0] }}',
        paid: ' {{ trigger.body.paid }} ',
        skus: '{{ nodes.fetch.body.items.sku }}',
        total: '{{ $sum(nodes.fetch.body.items.qty) }}',
      }),
    ).toEqual({ status: 200, body: { sku: 'x', qty: 2 }, paid: true, skus: ['x', 'y'], total: 5 });
  });

  it('returns plain arrays, not JSONata sequences with extra flags', async () => {
    const { skus } = await resolve({ skus: '{{ nodes.fetch.body.items.sku }}' });
    expect(Object.keys(skus as object)).toEqual(['0', '1']);
  });

  it('turns an undefined result (no match) into null', async () => {
    expect(await resolve({ missing: '{{ trigger.body.nope }}' })).toEqual({ missing: null });
  });

  it('reads an object constructor whose braces close next to the delimiters', async () => {
    expect(await resolve({ body: '{{ {"order": {"id": trigger.body.id}} }}' })).toEqual({ body: { order: { id: 42 } } });
  });

  it('copies results so changing them cannot change the node output they came from', async () => {
    const { body } = (await resolve({ body: '{{ nodes.fetch.body }}' })) as { body: { id: number } };
    body.id = 99;
    expect((scope.nodes.fetch as { body: { id: number } }).body.id).toBe(7);
  });
});

describe('resolveConfig: expressions inside longer strings are interpolated', () => {
  it('writes strings, numbers and booleans as text', async () => {
    expect(
      await resolve({ url: 'https://api.test/orders/{{ trigger.body.id }}?who={{ trigger.body.name }}&paid={{ trigger.body.paid }}' }),
    ).toEqual({
      url: 'https://api.test/orders/42?who=Ada&paid=true',
    });
  });

  it('writes objects and arrays as JSON and null or undefined as nothing', async () => {
    expect(
      await resolve({ text: 'tags={{ trigger.body.tags }} item={{ nodes.fetch.body.items[0] }} none=[{{ trigger.body.nope }}]' }),
    ).toEqual({
      text: 'tags=["a","b"] item={"sku":"x","qty":2} none=[]',
    });
  });

  it('keeps an unclosed {{ and a blank {{ }} as text', async () => {
    expect(await resolve({ text: 'a {{ b' })).toEqual({ text: 'a {{ b' });
    expect(await resolve({ blank: '{{ }}', text: '{{}} and {{ trigger.body.id }}' })).toEqual({ blank: '{{ }}', text: '{{}} and 42' });
  });

  it('reads an object constructor inside a longer string', async () => {
    expect(await resolve({ text: 'x={{ {"a": {"b": trigger.body.id}} }}!' })).toEqual({ text: 'x={"a":{"b":42}}!' });
  });
});

describe('resolveConfig: walking the config', () => {
  it('hands back the parts without expressions as they are, copying only the way to an expression', async () => {
    const plain = deepFreeze({ code: 'return input;', limits: { timeout_ms: 100 }, tags: ['a', 'b'] });
    expect(await resolve(plain)).toBe(plain);
    const mixed = deepFreeze({ limits: { timeout_ms: 100 }, tags: ['a'], body: { text: 'Hi {{ trigger.body.name }}', keep: { n: 1 } } });
    const resolved = await resolve(mixed);
    expect(resolved).toEqual({ limits: { timeout_ms: 100 }, tags: ['a'], body: { text: 'Hi Ada', keep: { n: 1 } } });
    expect(resolved).not.toBe(mixed);
    expect(resolved.limits).toBe(mixed.limits);
    expect(resolved.tags).toBe(mixed.tags);
    expect((resolved.body as Record<string, unknown>).keep).toBe(mixed.body.keep);
    // An unfrozen config is scanned afresh each time: an expression added later is found.
    const open: Record<string, unknown> = { greeting: 'Hi' };
    expect(await resolve(open)).toBe(open);
    open.greeting = 'Hi {{ trigger.body.name }}';
    expect(await resolve(open)).toEqual({ greeting: 'Hi Ada' });
  });

  it('resolves nested objects and arrays and leaves other values alone', async () => {
    const config = {
      method: 'POST',
      timeout_ms: 3000,
      retry: false,
      nothing: null,
      headers: { Authorization: 'Bearer {{ trigger.body.name }}' },
      list: ['{{ trigger.body.id }}', 1, { deep: ['{{ execution.id }}'] }],
    };
    expect(await resolve(config)).toEqual({
      method: 'POST',
      timeout_ms: 3000,
      retry: false,
      nothing: null,
      headers: { Authorization: 'Bearer Ada' },
      list: [42, 1, { deep: ['exec-1'] }],
    });
  });

  it('returns strings without {{ unchanged and compiles nothing for them', async () => {
    const before = compiledExpressionCount();
    const code = 'return { a: input.b }; // no expression here: } }}';
    expect(await resolve({ code, url: 'https://example.com/{x}' })).toEqual({ code, url: 'https://example.com/{x}' });
    expect(compiledExpressionCount()).toBe(before);
  });

  it('keeps at most 1000 compiled expressions', async () => {
    for (let i = 0; i < 1100; i++) await resolve({ n: `{{ ${i} }}` });
    expect(compiledExpressionCount()).toBe(1000);
  });

  it('keeps a "__proto__" key as a key of the result', async () => {
    const config = JSON.parse('{"values": {"__proto__": "{{ trigger.body.id }}"}}') as Record<string, unknown>;
    const resolved = (await resolve(config)) as { values: object };
    expect(Object.getPrototypeOf(resolved.values)).toBe(Object.prototype);
    expect(Object.entries(resolved.values)).toEqual([['__proto__', 42]]);
  });

  it('does not change the config it was given', async () => {
    const config = { body: { id: '{{ trigger.body.id }}' } };
    await resolve(config);
    expect(config).toEqual({ body: { id: '{{ trigger.body.id }}' } });
  });

  it('binds each scope key as a variable too', async () => {
    expect(
      await resolve({
        id: '{{ $trigger.body.id }}',
        // Inside a path the input has moved on; the variable still reaches the scope.
        pairs: '{{ nodes.fetch.body.items.(sku & "-" & $trigger.body.id) }}',
        workflow: '{{ $workflow.id }}',
        total: '{{ $input.total }}',
      }),
    ).toEqual({ id: 42, pairs: ['x-42', 'y-42'], workflow: 'wf-1', total: 5 });
  });

  it('sees the loop item and index', async () => {
    expect(
      await resolve({ line: '{{ index }}: {{ item.sku }}', qty: '{{ $item.qty }}' }, { ...scope, item: { sku: 'x', qty: 2 }, index: 0 }),
    ).toEqual({
      line: '0: x',
      qty: 2,
    });
  });
});

describe('resolveConfig: errors', () => {
  it('names the node, the field and the expression when compiling fails', async () => {
    const error = await failure(resolve({ body: { order: '{{ nodes.x. }}' } }));
    expect(error.code).toBe('expression_error');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('node "shape": config.body.order: expression {{ nodes.x. }} failed: Unexpected end of expression');
    expect(error.details).toEqual({ node_id: 'shape', field: 'config.body.order', expression: 'nodes.x.' });
  });

  it('names array positions in the field path when evaluating fails', async () => {
    const error = await failure(resolve({ list: ['ok', 'n={{ $number("abc") }}'] }));
    expect(error.code).toBe('expression_error');
    expect(error.message).toMatch(/^node "shape": config\.list\[1\]: expression \{\{ \$number\("abc"\) \}\} failed: /);
    expect(error.details).toMatchObject({ field: 'config.list[1]' });
  });

  it('stops a runaway recursive expression after the time limit', async () => {
    const started = Date.now();
    const error = await failure(resolve({ loop: '{{ ($f := function($n) { $f($n + 1) }; $f(0)) }}' }));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error.code).toBe('expression_timeout');
    expect(error.message).toBe(
      'node "shape": config.loop: expression {{ ($f := function($n) { $f($n + 1) }; $f(0)) }} ran longer than 1000 ms and was stopped (a runaway loop or recursion?)',
    );
  });

  it('stops recursion that nests too deep', async () => {
    const error = await failure(resolve({ deep: '{{ ($f := function($n) { $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100000)) }}' }));
    expect(error.code).toBe('expression_timeout');
    expect(error.message).toMatch(/nested deeper than 500 levels/);
  });

  it('allows ordinary recursion', async () => {
    expect(await resolve({ n: '{{ ($f := function($n) { $n = 0 ? 0 : 1 + $f($n - 1) }; $f(50)) }}' })).toEqual({ n: 50 });
  });
});

describe('evaluateExpression', () => {
  it('evaluates a bare expression and one written in {{ }}', async () => {
    expect(await evaluateExpression('trigger.body.id > 40', scope)).toBe(true);
    expect(await evaluateExpression('{{ nodes.fetch.body.items }}', scope)).toEqual([
      { sku: 'x', qty: 2 },
      { sku: 'y', qty: 3 },
    ]);
    expect(await evaluateExpression('trigger.body.nope', scope)).toBeNull();
  });

  it('names the field when told where the expression came from', async () => {
    const error = await failure(evaluateExpression('{{ trigger.body. }}', scope, { nodeId: 'branch', field: 'config.condition' }));
    expect(error.message).toMatch(/^node "branch": config\.condition: expression \{\{ trigger\.body\. \}\} failed: /);
    expect(error.details).toEqual({ node_id: 'branch', field: 'config.condition', expression: 'trigger.body.' });
  });

  it('reports the expression alone without a place', async () => {
    const error = await failure(evaluateExpression('(', scope));
    expect(error.code).toBe('expression_error');
    expect(error.message).toMatch(/^expression \{\{ \( \}\} failed: /);
    expect(error.details).toEqual({ expression: '(' });
  });
});
