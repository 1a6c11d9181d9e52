import qs from 'qs';
import { describe, expect, it } from 'vitest';
import { MATCH_ALL, MAX_IN_VALUES, parseFilter } from './filter.js';
import type { ResourceDefinition } from './resource-definition.js';
import { expectInvalidParameter } from '../../../test/support/expect-invalid-parameter.js';

const maker: ResourceDefinition = {
  type: 'maker',
  table: 'makers',
  attributes: { name: { kind: 'string' }, founded: { kind: 'integer' } },
  defaultSort: 'name',
};

const gadget: ResourceDefinition = {
  type: 'gadget',
  table: 'gadgets',
  attributes: {
    name: { kind: 'string' },
    nickname: { kind: 'string', nullable: true },
    count: { kind: 'integer' },
    weight: { kind: 'number' },
    active: { kind: 'boolean' },
    made_at: { kind: 'timestamp' },
    size: { kind: 'enum', values: ['small', 'large'] },
    spec: { kind: 'object', nullable: true },
    maker_id: { kind: 'uuid', nullable: true },
    label: { kind: 'string', column: 'label_text' },
    secret: { kind: 'string', filterable: false },
  },
  relationFilters: { maker: { resource: () => maker, localColumn: 'maker_id' } },
  defaultSort: '-made_at',
};

const UUID = '0190a000-0000-7000-8000-0000000000aa';

/** Parses a query string the way the API does, then the filter in it. */
function parseQuery(query: string) {
  return parseFilter(qs.parse(query, { depth: 10, arrayLimit: 100 }).filter, gadget);
}

const COMMON = [
  'eq',
  'not_eq',
  'greater_than',
  'greater_than_or_equal',
  'less_than',
  'less_than_or_equal',
  'is_distinct_from',
  'is_not_distinct_from',
];
const STRING_ONLY = ['contains', 'like', 'ilike', 'string_starts_with', 'string_ends_with'];

describe('parseFilter', () => {
  it('matches everything when the request has no filter', () => {
    expect(parseFilter(undefined, gadget)).toEqual(MATCH_ALL);
    expect(MATCH_ALL).toEqual({ type: 'and', filters: [] });
  });

  it('reads filter[name]=x as the eq shorthand', () => {
    expect(parseQuery('filter[name]=x')).toEqual({ type: 'comparison', attribute: 'name', operator: 'eq', value: 'x' });
  });

  it.each([...COMMON, ...STRING_ONLY])('accepts the %s operator on a string attribute with the operand as given', (operator) => {
    expect(parseQuery(`filter[name][${operator}]=A%25b_`)).toEqual({ type: 'comparison', attribute: 'name', operator, value: 'A%b_' });
  });

  it.each(COMMON)('accepts the %s operator on an integer attribute', (operator) => {
    expect(parseQuery(`filter[count][${operator}]=7`)).toEqual({ type: 'comparison', attribute: 'count', operator, value: 7 });
  });

  it('reads is_nil operands as booleans', () => {
    expect(parseQuery('filter[nickname][is_nil]=true')).toEqual({
      type: 'comparison',
      attribute: 'nickname',
      operator: 'is_nil',
      value: true,
    });
    expect(parseQuery('filter[count][is_nil]=false')).toEqual({ type: 'comparison', attribute: 'count', operator: 'is_nil', value: false });
  });

  it('reads in lists given as repeated brackets, as a comma list, and past the qs array limit', () => {
    const expected = { type: 'comparison', attribute: 'size', operator: 'in', value: ['small', 'large'] };
    expect(parseQuery('filter[size][in][]=small&filter[size][in][]=large')).toEqual(expected);
    expect(parseQuery('filter[size][in]=small,large')).toEqual(expected);
    expect(parseQuery('filter[size][in][0]=small&filter[size][in][1]=large')).toEqual(expected);
    const many = Array.from({ length: 150 }, (_, i) => `filter[count][in][]=${i}`).join('&');
    const node = parseQuery(many);
    expect(node.type === 'comparison' && node.operator === 'in' ? node.value : null).toEqual(Array.from({ length: 150 }, (_, i) => i));
  });

  it('reads an empty in value as an empty list', () => {
    expect(parseQuery('filter[count][in]=')).toEqual({ type: 'comparison', attribute: 'count', operator: 'in', value: [] });
  });

  it('coerces operands to the attribute kind', () => {
    const value = (query: string) => {
      const node = parseQuery(query);
      return node.type === 'comparison' ? node.value : undefined;
    };
    expect(value(`filter[maker_id][eq]=${UUID.toUpperCase()}`)).toBe(UUID);
    expect(value('filter[count][eq]=-12')).toBe(-12);
    expect(value('filter[weight][eq]=1.5e3')).toBe(1500);
    expect(value('filter[weight][eq]=-.25')).toBe(-0.25);
    expect(value('filter[active][eq]=true')).toBe(true);
    expect(value('filter[active][eq]=false')).toBe(false);
    expect(value('filter[made_at][eq]=2026-03-04T05:06:07.5%2B02:00')).toBe('2026-03-04T03:06:07.500000Z');
    expect(value('filter[size][eq]=large')).toBe('large');
    expect(value('filter[spec][eq]={ "a" : [1, 2] }')).toBe('{"a":[1,2]}');
    expect(value('filter[name][eq]= spaced ')).toBe(' spaced ');
    expect(value(`filter[id][eq]=${UUID}`)).toBe(UUID);
  });

  it('keeps attribute names, not columns, in the tree', () => {
    expect(parseQuery('filter[label]=x')).toEqual({ type: 'comparison', attribute: 'label', operator: 'eq', value: 'x' });
  });

  it('combines several keys and several operators of one attribute with and', () => {
    expect(parseQuery('filter[count][greater_than]=1&filter[count][less_than]=5&filter[name]=x')).toEqual({
      type: 'and',
      filters: [
        {
          type: 'and',
          filters: [
            { type: 'comparison', attribute: 'count', operator: 'greater_than', value: 1 },
            { type: 'comparison', attribute: 'count', operator: 'less_than', value: 5 },
          ],
        },
        { type: 'comparison', attribute: 'name', operator: 'eq', value: 'x' },
      ],
    });
  });

  it('nests and, or, not and relation filters', () => {
    expect(
      parseQuery('filter[or][0][and][0][name]=a&filter[or][0][and][1][not][count][eq]=2&filter[or][1][maker][name][ilike]=ac%25'),
    ).toEqual({
      type: 'or',
      filters: [
        {
          type: 'and',
          filters: [
            { type: 'comparison', attribute: 'name', operator: 'eq', value: 'a' },
            { type: 'not', filter: { type: 'comparison', attribute: 'count', operator: 'eq', value: 2 } },
          ],
        },
        { type: 'relation', relation: 'maker', filter: { type: 'comparison', attribute: 'name', operator: 'ilike', value: 'ac%' } },
      ],
    });
  });
});

describe('parseFilter refusals', () => {
  it.each([
    ['filter[count][eq]=abc', 'filter[count][eq]', "'abc' is not an integer"],
    ['filter[count][eq]=1.5', 'filter[count][eq]', "'1.5' is not an integer"],
    ['filter[count][eq]=9007199254740993', 'filter[count][eq]', "'9007199254740993' is outside the safe integer range"],
    ['filter[weight][eq]=abc', 'filter[weight][eq]', "'abc' is not a finite number"],
    ['filter[weight][eq]=Infinity', 'filter[weight][eq]', "'Infinity' is not a finite number"],
    ['filter[weight][eq]=0x10', 'filter[weight][eq]', "'0x10' is not a finite number"],
    ['filter[weight][eq]=', 'filter[weight][eq]', "'' is not a finite number"],
    ['filter[weight][eq]=1e999', 'filter[weight][eq]', "'1e999' is not a finite number"],
    ['filter[active][eq]=yes', 'filter[active][eq]', "'yes' is not a boolean (true or false)"],
    ['filter[made_at][eq]=2026-01-01', 'filter[made_at][eq]', "'2026-01-01' is not an RFC 3339 timestamp"],
    ['filter[size][eq]=medium', 'filter[size][eq]', "'medium' is not one of small, large"],
    ['filter[spec][eq]={', 'filter[spec][eq]', "'{' is not JSON text"],
    ['filter[maker_id][eq]=nope', 'filter[maker_id][eq]', "'nope' is not a UUID"],
    ['filter[count][in]=1,x', 'filter[count][in]', "'x' is not an integer"],
    ['filter[name][eq]=a%00b', 'filter[name][eq]', 'Filter values cannot contain the NUL character'],
    ['filter[name][in]=a,%00', 'filter[name][in]', 'Filter values cannot contain the NUL character'],
    ['filter[and][0][maker][founded][eq]=old', 'filter[and][0][maker][founded][eq]', "'old' is not an integer"],
  ])('refuses %s', (query, parameter, detail) => {
    expectInvalidParameter(() => parseQuery(query), parameter, detail);
  });

  it('shortens a long operand in the message', () => {
    expectInvalidParameter(
      () => parseQuery(`filter[count][eq]=${'9'.repeat(70)}x`),
      'filter[count][eq]',
      `'${'9'.repeat(64)}…' is not an integer`,
    );
  });

  it('refuses an unknown attribute, a non-filterable one, and a prototype key', () => {
    expectInvalidParameter(
      () => parseQuery('filter[colour]=red'),
      'filter[colour]',
      "'colour' is not a filterable attribute or relation of gadget",
    );
    expectInvalidParameter(
      () => parseQuery('filter[secret][eq]=x'),
      'filter[secret]',
      "'secret' is not a filterable attribute or relation of gadget",
    );
    expectInvalidParameter(
      () => parseFilter({ constructor: 'x' }, gadget),
      'filter[constructor]',
      "'constructor' is not a filterable attribute or relation of gadget",
    );
    expectInvalidParameter(
      () => parseQuery('filter[maker][colour]=red'),
      'filter[maker][colour]',
      "'colour' is not a filterable attribute or relation of maker",
    );
  });

  it('refuses an unknown operator, listing the operators of the kind', () => {
    expectInvalidParameter(
      () => parseQuery('filter[count][gt]=1'),
      'filter[count][gt]',
      "Unknown filter operator 'gt'; integer attributes take eq, not_eq, in, greater_than, greater_than_or_equal, less_than, less_than_or_equal, is_distinct_from, is_not_distinct_from, is_nil",
    );
    expectInvalidParameter(
      () => parseQuery('filter[name][startswith]=a'),
      'filter[name][startswith]',
      "Unknown filter operator 'startswith'; string attributes take eq, not_eq, in, greater_than, greater_than_or_equal, less_than, less_than_or_equal, is_distinct_from, is_not_distinct_from, is_nil, contains, like, ilike, string_starts_with, string_ends_with",
    );
  });

  it.each(STRING_ONLY)('refuses the string operator %s on a non-string attribute', (operator) => {
    expectInvalidParameter(
      () => parseQuery(`filter[size][${operator}]=sm`),
      `filter[size][${operator}]`,
      `Operator '${operator}' applies to string attributes only; 'size' is enum`,
    );
  });

  it('refuses an is_nil operand other than true or false', () => {
    expectInvalidParameter(
      () => parseQuery('filter[nickname][is_nil]=1'),
      'filter[nickname][is_nil]',
      "is_nil takes true or false, got '1'",
    );
  });

  it('refuses a filter that is not an object', () => {
    expectInvalidParameter(() => parseQuery('filter=name'), 'filter', 'filter must be a filter object, e.g. filter[name][eq]=value');
    expectInvalidParameter(
      () => parseQuery('filter[maker]=acme'),
      'filter[maker]',
      'filter[maker] must be a filter object, e.g. filter[maker][name][eq]=value',
    );
  });

  it('refuses and/or without a list and not with one', () => {
    expectInvalidParameter(
      () => parseQuery('filter[and][name]=x'),
      'filter[and]',
      'filter[and] takes a list of filters, e.g. filter[and][0][name][eq]=value',
    );
    expectInvalidParameter(
      () => parseQuery('filter[or]=x'),
      'filter[or]',
      'filter[or] takes a list of filters, e.g. filter[or][0][name][eq]=value',
    );
    expectInvalidParameter(
      () => parseQuery('filter[and][0]=x'),
      'filter[and][0]',
      'filter[and][0] must be a filter object, e.g. filter[and][0][name][eq]=value',
    );
    expectInvalidParameter(
      () => parseQuery('filter[not][0][name]=x'),
      'filter[not]',
      'filter[not] takes one filter object, e.g. filter[not][name][eq]=value',
    );
    expectInvalidParameter(
      () => parseQuery('filter[not]=x'),
      'filter[not]',
      'filter[not] takes one filter object, e.g. filter[not][name][eq]=value',
    );
  });

  it('refuses a repeated attribute and an operand that is not a single value', () => {
    const hint =
      'filter[name] takes a value or an operator, e.g. filter[name][eq]=value; for several values use filter[name][in][]=a&filter[name][in][]=b';
    expectInvalidParameter(() => parseQuery('filter[name]=a&filter[name]=b'), 'filter[name]', hint);
    expectInvalidParameter(() => parseQuery('filter[name][eq][]=a'), 'filter[name][eq]', 'filter[name][eq] takes a single value');
    expectInvalidParameter(() => parseQuery('filter[name][eq][x]=a'), 'filter[name][eq]', 'filter[name][eq] takes a single value');
  });

  it('refuses an in list of non-values or of too many values', () => {
    expectInvalidParameter(
      () => parseQuery('filter[name][in][a]=x'),
      'filter[name][in]',
      'filter[name][in] takes a list of values: filter[name][in][]=a&filter[name][in][]=b or filter[name][in]=a,b',
    );
    expectInvalidParameter(
      () => parseQuery('filter[name][in][0][x]=1'),
      'filter[name][in]',
      'filter[name][in] takes a list of values: filter[name][in][]=a&filter[name][in][]=b or filter[name][in]=a,b',
    );
    const tooMany = Array.from({ length: MAX_IN_VALUES + 1 }, (_, i) => String(i)).join(',');
    expectInvalidParameter(
      () => parseQuery(`filter[count][in]=${tooMany}`),
      'filter[count][in]',
      'filter[count][in] takes at most 1000 values',
    );
  });

  it('refuses a like pattern ending in an unpaired escape, but not an escaped backslash', () => {
    const detail = "The pattern ends with an unpaired escape character '\\'; write '\\\\' for a literal backslash";
    expectInvalidParameter(() => parseFilter({ name: { like: 'ab\\' } }, gadget), 'filter[name][like]', detail);
    expectInvalidParameter(() => parseFilter({ name: { ilike: 'a\\\\\\' } }, gadget), 'filter[name][ilike]', detail);
    expect(parseFilter({ name: { like: 'ab\\\\' } }, gadget)).toEqual({
      type: 'comparison',
      attribute: 'name',
      operator: 'like',
      value: 'ab\\\\',
    });
  });
});
