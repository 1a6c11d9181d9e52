import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFields } from '../src/api/jsonapi/fields.js';
import { parseFilter } from '../src/api/jsonapi/filter.js';
import { parsePage } from '../src/api/jsonapi/page.js';
import { parseSort } from '../src/api/jsonapi/sort.js';
import { findPrototypeName } from '../src/api/plugins/query-names.js';
import { describeEachDialect } from './support/dialects.js';
import { expectInvalidParameter } from './support/expect-invalid-parameter.js';
import { gadgetDefinition as gadget } from './support/gadget-fixture.js';
import { storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { deliver, webhookWorkflow } from './support/webhook-helpers.js';

/** Each filter qs used to drop without a word, and the parameter its 400 names. */
const DROPPED_FILTERS: [query: string, parameter: string][] = [
  ['filter[name][__proto__][eq]=x', 'filter[name][__proto__]'],
  ['filter[constructor][prototype][x]=1', 'filter[constructor]'],
  ['filter[hasOwnProperty][eq]=1', 'filter[hasOwnProperty]'],
  ['filter[__proto__][eq]=1', 'filter[__proto__]'],
  ['filter[toString][eq]=1', 'filter[toString]'],
  ['filter[valueOf]=1', 'filter[valueOf]'],
  ['filter[name][toString]=x', 'filter[name][toString]'],
  ['filter[or][0][__proto__][eq]=1', 'filter[or][0][__proto__]'],
  ['filter%5B__proto__%5D%5Beq%5D=1', 'filter[__proto__]'],
];

describe('findPrototypeName', () => {
  it('finds a member of Object.prototype as the root or any part of a parameter name, decoded as qs decodes it', () => {
    expect(findPrototypeName('/api/v1/workflows?constructor=1')).toEqual({ parameter: 'constructor', name: 'constructor' });
    expect(findPrototypeName('/x?a=1&page[valueOf]=2')).toEqual({ parameter: 'page[valueOf]', name: 'valueOf' });
    expect(findPrototypeName('/x?filter%5Bname%5D%5B__proto__%5D%5Beq%5D=x')).toEqual({
      parameter: 'filter[name][__proto__]',
      name: '__proto__',
    });
    expect(findPrototypeName('/x?filter[to%53tring]=1')).toEqual({ parameter: 'filter[toString]', name: 'toString' });
    expect(findPrototypeName('/x?fields[__defineGetter__]')).toEqual({ parameter: 'fields[__defineGetter__]', name: '__defineGetter__' });
  });

  it('lets every other name through, and values whatever they say', () => {
    expect(findPrototypeName('/api/v1/workflows')).toBeNull();
    expect(findPrototypeName('/x?filter[name][eq]=constructor&fields[workflow]=__proto__&sort=toString')).toBeNull();
    expect(findPrototypeName('/x?filter[row.constructor][eq]=1&filter[prototype]=1&filter[Constructor]=1&a+b=1&%ZZ=1')).toBeNull();
  });
});

describe('the list query parsers', () => {
  // Own members named like Object.prototype's, as JSON.parse or a null-prototype object holds them:
  // each parser looks names up with own-property checks, so none matches an inherited member.
  const own = (json: string): unknown => JSON.parse(json);

  it('refuse filter attributes, relations and operators named like Object.prototype members', () => {
    for (const [json, parameter, detail] of [
      ['{"__proto__":{"eq":"1"}}', 'filter[__proto__]', "'__proto__' is not a filterable attribute or relation of gadget"],
      [
        '{"constructor":{"prototype":{"x":"1"}}}',
        'filter[constructor]',
        "'constructor' is not a filterable attribute or relation of gadget",
      ],
      ['{"hasOwnProperty":"1"}', 'filter[hasOwnProperty]', "'hasOwnProperty' is not a filterable attribute or relation of gadget"],
      ['{"maker":{"toString":"1"}}', 'filter[maker][toString]', "'toString' is not a filterable attribute or relation of maker"],
    ] as const) {
      expectInvalidParameter(() => parseFilter(own(json), gadget), parameter, detail);
    }
    expectInvalidParameter(
      () => parseFilter(own('{"name":{"valueOf":"1"}}'), gadget),
      'filter[name][valueOf]',
      `Unknown filter operator 'valueOf'; string attributes take eq, not_eq, in, greater_than, greater_than_or_equal, less_than, less_than_or_equal, is_distinct_from, is_not_distinct_from, is_nil, contains, like, ilike, string_starts_with, string_ends_with`,
    );
  });

  it('refuse fields, sort keys and page parameters named like Object.prototype members', () => {
    expectInvalidParameter(
      () => parseFields({ gadget: 'constructor' }, [gadget]),
      'fields[gadget]',
      "'constructor' is not an attribute of gadget",
    );
    expectInvalidParameter(
      () => parseFields(own('{"__proto__":"name"}'), [gadget]),
      'fields[__proto__]',
      "Unknown resource type '__proto__'; fields apply to gadget",
    );
    expectInvalidParameter(() => parseSort('-toString', gadget), 'sort', "'toString' is not an attribute of gadget");
    expectInvalidParameter(
      () => parsePage(own('{"constructor":"1"}')),
      'page[constructor]',
      "Unknown page parameter 'page[constructor]'; use page[limit], page[offset], page[after], page[before], page[count]",
    );
  });
});

describeEachDialect('query parameters named like Object.prototype members', (dialect) => {
  let t: TestApp;
  let storeId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    for (const name of ['Alpha', 'Beta']) await t.request('POST', '/api/v1/workflows', { body: { data: { name } } });
    const stores = storeClient(t);
    storeId = (await stores.create({ name: 'Orders', schema: { type: 'object', properties: { status: { type: 'string' } } } })).id;
    await stores.putOk(storeId, 'a', { status: 'paid' });
    await stores.putOk(storeId, 'b', { status: 'open' });
  });
  afterAll(() => t.close());

  const expectRefused = async (url: string, parameter: string) => {
    const res = await t.request('GET', url);
    expect(res.status, res.raw).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ code: 'invalid_query_parameter', source: { parameter } })]);
  };

  it.each(DROPPED_FILTERS)('GET /workflows?%s is 400 naming %s, not the unfiltered list', async (query, parameter) => {
    await expectRefused(`/api/v1/workflows?${query}`, parameter);
  });

  it.each(DROPPED_FILTERS)('GET /stores/:id/rows?%s is 400 naming %s, not every row', async (query, parameter) => {
    await expectRefused(`/api/v1/stores/${storeId}/rows?${query}`, parameter);
  });

  it('refuses such names in fields, page and on their own, and constructor as a field, like any unknown one', async () => {
    await expectRefused('/api/v1/workflows?fields[workflow]=constructor', 'fields[workflow]');
    await expectRefused('/api/v1/workflows?fields[constructor]=name', 'fields[constructor]');
    await expectRefused('/api/v1/workflows?page[__proto__]=1', 'page[__proto__]');
    await expectRefused('/api/v1/workflows?sort=valueOf', 'sort');
    await expectRefused('/api/v1/workflows?constructor=1', 'constructor');
    await expectRefused(`/api/v1/stores/${storeId}?fields[store]=toString`, 'fields[store]');
  });

  it('still answers filters on real attributes, whatever their values say', async () => {
    const named = await t.request('GET', '/api/v1/workflows?filter[name][eq]=constructor');
    expect(named.status, named.raw).toBe(200);
    expect(named.body.data).toEqual([]);
    const rows = await t.request('GET', `/api/v1/stores/${storeId}/rows?filter[row.status][eq]=paid`);
    expect(rows.body.data.map((row: { attributes: { key: string } }) => row.attributes.key)).toEqual(['a']);
  });

  it('leaves a webhook delivery its query as the sender wrote it (the check is the API’s)', async () => {
    const hook = await webhookWorkflow(t, 'Open', { verification: { method: 'none' } });
    const res = await deliver(t, `${hook.path}?constructor=1&a=2`, { body: '{}' });
    expect(res.status, res.body).toBeLessThan(300);
    await t.deps.engine.idle();
  });
});
