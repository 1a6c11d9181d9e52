import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import {
  isSingleExpression,
  templateAsJsonata,
  translateJsExpression,
  translateParameter,
  type ExpressionContext,
} from './n8n-expressions.js';

const ctx: ExpressionContext = {
  input: { root: 'input', adapt: (a) => a },
  node: (name) =>
    name === 'Fetch Order'
      ? { root: 'nodes.fetch_order', adapt: (a) => ['body', ...a] }
      : name === 'Set'
        ? { root: 'nodes.set', adapt: (a) => a }
        : undefined,
};

const js = (source: string) => translateJsExpression(source, ctx);

describe('translateJsExpression', () => {
  it('reads the input item through $json, $input.item.json, $input.first().json and $input.last().json', () => {
    expect(js('$json.body.name')).toEqual({ ok: true, text: 'input.body.name' });
    expect(js('$json["order id"].total')).toEqual({ ok: true, text: 'input.`order id`.total' });
    expect(js("$json['items'][0]")).toEqual({ ok: true, text: 'input.items[0]' });
    expect(js('$json')).toEqual({ ok: true, text: 'input' });
    expect(js('$input.item.json.x')).toEqual({ ok: true, text: 'input.x' });
    expect(js('$input.first().json.x')).toEqual({ ok: true, text: 'input[0].x' });
    expect(js('$input.last().json.x')).toEqual({ ok: true, text: 'input[-1].x' });
  });

  it("reads other nodes by name through $() and $node[], through the node's output adapter", () => {
    expect(js("$('Set').item.json.total")).toEqual({ ok: true, text: 'nodes.set.total' });
    expect(js('$node["Set"].json.total')).toEqual({ ok: true, text: 'nodes.set.total' });
    expect(js("$('Fetch Order').first().json.id")).toEqual({ ok: true, text: 'nodes.fetch_order[0].body.id' });
  });

  it('translates $now, $today, $workflow.id, $execution.id and the case methods', () => {
    expect(js('$now')).toEqual({ ok: true, text: '$now()' });
    expect(js('$today')).toEqual({ ok: true, text: '$fromMillis($floor($toMillis($now()) / 86400000) * 86400000)' });
    expect(js('$workflow.id')).toEqual({ ok: true, text: 'workflow.id' });
    expect(js('$execution.id')).toEqual({ ok: true, text: 'execution.id' });
    expect(js('$json.name.toUpperCase()')).toEqual({ ok: true, text: '$uppercase(input.name)' });
  });

  it('refuses everything whose meaning would not be exact, saying why', () => {
    expect(js('$json.a + $json.b')).toMatchObject({ ok: false, reason: expect.stringContaining('operators') });
    expect(js('$json.a || "x"')).toMatchObject({ ok: false });
    expect(js('$json.name.split("-")[0]')).toMatchObject({ ok: false, reason: expect.stringContaining('split()') });
    expect(js("$('Missing').item.json.x")).toMatchObject({ ok: false, reason: expect.stringContaining('"Missing"') });
    expect(js('$now.toFormat("yyyy")')).toMatchObject({ ok: false, reason: expect.stringContaining('Luxon') });
    expect(js('$env.API_KEY')).toMatchObject({ ok: false, reason: expect.stringContaining('$env') });
    expect(js('$workflow.name')).toMatchObject({ ok: false });
    expect(js('`${$json.a}`')).toMatchObject({ ok: false });
  });

  it('gives paths JSONata reads as JavaScript did on the same item', async () => {
    const item = { body: { name: 'Ada' }, 'order id': { total: 3 }, items: ['x', 'y'] };
    for (const [source, expected] of [
      ['$json.body.name', 'Ada'],
      ['$json["order id"].total', 3],
      ['$json.items[1]', 'y'],
      ['$json.body.name.toUpperCase()', 'ADA'],
    ] as const) {
      const translated = js(source);
      if (!translated.ok) throw new Error(translated.reason);
      expect(await jsonata(translated.text).evaluate({ input: item })).toBe(expected);
    }
  });
});

describe('translateParameter', () => {
  it('keeps literals and turns templates into Switchyard templates', () => {
    expect(translateParameter('plain text', ctx)).toEqual({ ok: true, value: 'plain text' });
    expect(translateParameter('={{ $json.id }}', ctx)).toEqual({ ok: true, value: '{{ input.id }}' });
    expect(translateParameter('=Order {{$json["id"]}} of {{ $json.name }}!', ctx)).toEqual({
      ok: true,
      value: 'Order {{ input.id }} of {{ input.name }}!',
    });
  });

  it('reports the first part it cannot translate and keeps the text', () => {
    expect(translateParameter('=a {{ $json.x * 2 }}', ctx)).toEqual({
      ok: false,
      reason: expect.stringContaining('$json.x * 2'),
      text: 'a {{ $json.x * 2 }}',
    });
    expect(translateParameter('={{ $json.x ', ctx)).toMatchObject({ ok: false, reason: 'has an unclosed {{' });
  });

  it('tells a single expression from a template', () => {
    expect(isSingleExpression('={{ $json.x }}')).toBe(true);
    expect(isSingleExpression('=  {{ $json.x }} ')).toBe(true);
    expect(isSingleExpression('=x {{ $json.x }}')).toBe(false);
    expect(isSingleExpression('{{ $json.x }}')).toBe(false);
  });

  it('renders a JSON template the way n8n renders it, for $eval', async () => {
    const translated = templateAsJsonata('={ "name": "{{ $json.name }}", "tags": {{ $json.tags }} }', ctx);
    if (!translated.ok) throw new Error(translated.reason);
    const value = await jsonata(`$eval(${translated.text})`).evaluate({ input: { name: 'Ada', tags: ['a', 'b'] } });
    expect(value).toEqual({ name: 'Ada', tags: ['a', 'b'] });
  });
});
