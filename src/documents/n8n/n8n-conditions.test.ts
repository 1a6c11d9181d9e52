import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { translateFilter, translateLegacyConditions } from './n8n-conditions.js';
import type { ExpressionContext } from './n8n-expressions.js';

const ctx: ExpressionContext = { input: { root: 'input', adapt: (a) => a }, node: () => undefined };

async function holds(text: string, input: unknown): Promise<boolean> {
  return Boolean(await jsonata(text).evaluate({ input }));
}

const filter = (type: string, operation: string, rightValue: unknown = '', caseSensitive = true) => ({
  options: { caseSensitive, typeValidation: 'strict', version: 2 },
  combinator: 'and',
  conditions: [{ leftValue: '={{ $json.v }}', rightValue, operator: { type, operation } }],
});

async function check(f: unknown, input: unknown): Promise<boolean> {
  const translated = translateFilter(f, ctx);
  if (!translated.ok) throw new Error(translated.reason);
  return holds(translated.text, input);
}

describe('translateFilter (IF 2+, Switch 3+)', () => {
  it('decides string operations as n8n does', async () => {
    expect(await check(filter('string', 'equals', 'processing'), { v: 'processing' })).toBe(true);
    expect(await check(filter('string', 'equals', 'Processing'), { v: 'processing' })).toBe(false);
    expect(await check(filter('string', 'equals', 'Processing', false), { v: 'processing' })).toBe(true);
    expect(await check(filter('string', 'notEquals', 'a'), { v: 'b' })).toBe(true);
    expect(await check(filter('string', 'contains', 'ell'), { v: 'hello' })).toBe(true);
    expect(await check(filter('string', 'notContains', 'ell'), { v: 'hello' })).toBe(false);
    expect(await check(filter('string', 'notContains', 'ell'), {})).toBe(true);
    expect(await check(filter('string', 'startsWith', 'he'), { v: 'hello' })).toBe(true);
    expect(await check(filter('string', 'endsWith', 'lo'), { v: 'hello' })).toBe(true);
    expect(await check(filter('string', 'endsWith', 'hello!'), { v: 'hello' })).toBe(false);
    expect(await check(filter('string', 'regex', '/^h.l+o$/i'), { v: 'HELLO' })).toBe(true);
    expect(await check(filter('string', 'empty'), { v: '' })).toBe(true);
    expect(await check(filter('string', 'empty'), {})).toBe(true);
    expect(await check(filter('string', 'notEmpty'), { v: 'x' })).toBe(true);
    expect(await check(filter('string', 'exists'), { v: 'x' })).toBe(true);
    expect(await check(filter('string', 'notExists'), {})).toBe(true);
  });

  it('decides number, boolean, date, array and object operations', async () => {
    expect(await check(filter('number', 'gt', 100), { v: 101 })).toBe(true);
    expect(await check(filter('number', 'lte', 100), { v: 101 })).toBe(false);
    expect(await check(filter('boolean', 'true'), { v: true })).toBe(true);
    expect(await check(filter('boolean', 'false'), { v: true })).toBe(false);
    expect(await check(filter('dateTime', 'after', '2024-01-01T00:00:00Z'), { v: '2024-06-01T00:00:00Z' })).toBe(true);
    expect(await check(filter('array', 'contains', 'b'), { v: ['a', 'b'] })).toBe(true);
    expect(await check(filter('array', 'lengthGt', 1), { v: ['a', 'b'] })).toBe(true);
    expect(await check(filter('array', 'empty'), { v: [] })).toBe(true);
    expect(await check(filter('object', 'notEmpty'), { v: { a: 1 } })).toBe(true);
    expect(await check(filter('object', 'empty'), { v: {} })).toBe(true);
  });

  it('combines conditions with and/or', async () => {
    const both = {
      combinator: 'or',
      options: {},
      conditions: [
        filter('number', 'gt', 10).conditions[0],
        { leftValue: '={{ $json.w }}', rightValue: 'x', operator: { type: 'string', operation: 'equals' } },
      ],
    };
    expect(await check(both, { v: 1, w: 'x' })).toBe(true);
    expect(await check({ ...both, combinator: 'and' }, { v: 1, w: 'x' })).toBe(false);
  });

  it('refuses an operand or operation it cannot translate exactly', () => {
    expect(translateFilter(filter('string', 'regex', '={{ $json.pattern }}'), ctx)).toMatchObject({ ok: false });
    expect(
      translateFilter(
        { conditions: [{ leftValue: '={{ $json.a + 1 }}', rightValue: 2, operator: { type: 'number', operation: 'equals' } }] },
        ctx,
      ),
    ).toMatchObject({ ok: false });
    expect(translateFilter(filter('string', 'isSpecial'), ctx)).toMatchObject({ ok: false, reason: expect.stringContaining('isSpecial') });
  });
});

describe('translateLegacyConditions (IF 1)', () => {
  it('decides each type with its default operation and combines all/any', async () => {
    const conditions = {
      number: [{ value1: '={{$json["n"]}}', operation: 'larger', value2: 5 }],
      string: [{ value1: '={{$json.s}}', value2: 'ok' }],
    };
    const all = translateLegacyConditions(conditions, 'all', ctx);
    const any = translateLegacyConditions(conditions, 'any', ctx);
    if (!all.ok || !any.ok) throw new Error('untranslated');
    expect(await holds(all.text, { n: 6, s: 'ok' })).toBe(true);
    expect(await holds(all.text, { n: 6, s: 'no' })).toBe(false);
    expect(await holds(any.text, { n: 6, s: 'no' })).toBe(true);
    const smaller = translateLegacyConditions({ number: [{ value1: '={{ $json.n }}', value2: 5 }] }, 'all', ctx);
    if (!smaller.ok) throw new Error(smaller.reason);
    expect(await holds(smaller.text, { n: 4 })).toBe(true);
  });

  it('cannot read node context (the n8n 1 loop end check)', () => {
    expect(
      translateLegacyConditions({ boolean: [{ value1: '={{$node["SplitInBatches"].context["noItemsLeft"]}}', value2: true }] }, 'all', {
        ...ctx,
        node: () => ({ root: 'nodes.x', adapt: (a) => a }),
      }),
    ).toMatchObject({ ok: false });
  });
});
