import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { writeStoreRow } from '../src/store/store-write.js';
import { describeEachDialect } from './support/dialects.js';
import { keysOf, relative, storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describeEachDialect('store change feed', (dialect) => {
  let t: TestApp;
  let stores: ReturnType<typeof storeClient>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    stores = storeClient(t);
  });
  afterAll(() => t.close());

  const feed = (storeId: string, query = '') => `/api/v1/stores/${storeId}/rows${query}`;

  describe('cursor', () => {
    it('pages rows ascending by update time, and links.next is there on every page, the last included', async () => {
      const store = (await stores.create({ name: 'Paged' })).id;
      for (const key of ['c', 'a', 'b', 'e', 'd']) await stores.putOk(store, key, { key });
      const first = await t.request('GET', feed(store, '?page[limit]=2'));
      expect(keysOf(first.body.data)).toEqual(['c', 'a']);
      const second = await t.request('GET', relative(first.body.links.next));
      expect(keysOf(second.body.data)).toEqual(['b', 'e']);
      const third = await t.request('GET', relative(second.body.links.next));
      expect(keysOf(third.body.data)).toEqual(['d']);
      const empty = await t.request('GET', relative(third.body.links.next));
      expect(empty.body.data).toEqual([]);
      expect(empty.body.links.next).toBe(third.body.links.next);
      expect(new URL(empty.body.links.next).searchParams.get('page[limit]')).toBe('2');
    });

    it('shows writes made between pages after the cursor, and a replaced row again at the end', async () => {
      const store = (await stores.create({ name: 'Moving' })).id;
      for (const key of ['r1', 'r2', 'r3']) await stores.putOk(store, key, { v: 1 });
      const { entries, next } = await stores.drain(feed(store, '?page[limit]=2'));
      expect(keysOf(entries)).toEqual(['r1', 'r2', 'r3']);
      await stores.putOk(store, 'r1', { v: 2 });
      await stores.putOk(store, 'r4', { v: 1 });
      const later = await stores.drain(next);
      expect(later.entries.map((e) => [e.attributes.key, e.attributes.row.v])).toEqual([
        ['r1', 2],
        ['r4', 1],
      ]);
      // The whole feed now lists r1 after r3: one entry per row, at its latest write.
      expect(keysOf((await stores.drain(feed(store))).entries)).toEqual(['r2', 'r3', 'r1', 'r4']);
    });

    it('follows an empty first page later: links.next names where the request started', async () => {
      const store = (await stores.create({ name: 'Quiet' })).id;
      const empty = await t.request('GET', feed(store));
      expect(empty.body.data).toEqual([]);
      await stores.putOk(store, 'first', {});
      const later = await t.request('GET', relative(empty.body.links.next));
      expect(keysOf(later.body.data)).toEqual(['first']);
    });

    it('keeps commit order when the clock goes back: a later write never sorts before a cursor', async () => {
      const store = (await stores.create({ name: 'Skewed' })).id;
      const a = await stores.putOk(store, 'z-late-clock', {});
      const { next } = await stores.drain(feed(store));
      t.clock.set('2026-01-01T00:00:00.000000Z');
      const b = await stores.putOk(store, 'a-early-clock', {});
      expect(b.updated_at > a.updated_at).toBe(true);
      expect(keysOf((await stores.drain(next)).entries)).toEqual(['a-early-clock']);
      t.clock.set('2026-11-02T00:00:00.000000Z');
    });

    it('orders rows written at one instant by key, by code point', async () => {
      const store = (await stores.create({ name: 'Same time' })).id;
      const db = t.deps.db;
      await db.transaction().execute(async (trx) => {
        for (const key of ['b', 'é', 'A', '😀', 'ａ']) {
          await trx
            .insertInto('store_rows')
            .values({
              store_id: store,
              key,
              row: '{}',
              created_at: '2026-11-05T00:00:00.000000Z',
              updated_at: '2026-11-05T00:00:00.000000Z',
              workflow_id: null,
              execution_id: null,
            })
            .execute();
        }
      });
      const first = await t.request('GET', feed(store, '?page[limit]=2'));
      const rest = await stores.drain(relative(first.body.links.next));
      expect([...keysOf(first.body.data), ...keysOf(rest.entries)]).toEqual(['A', 'b', 'é', 'ａ', '😀']);
    });

    it('sees every write of concurrent writers exactly once while a consumer polls', async () => {
      const store = (await stores.create({ name: 'Busy' })).id;
      const seen: string[] = [];
      let next = feed(store, '?page[limit]=7');
      const poll = async () => {
        const res = await t.request('GET', next);
        seen.push(...keysOf(res.body.data));
        next = relative(res.body.links.next);
      };
      const writes = Array.from({ length: 60 }, (_, i) => stores.put(store, `w${i}`, { i }));
      const polls = (async () => {
        for (let i = 0; i < 20; i++) await poll();
      })();
      await Promise.all([...writes, polls]);
      for (let i = 0; i < 20; i++) await poll();
      expect(seen).toHaveLength(60);
      expect(new Set(seen).size).toBe(60);
    });

    it('refuses a forged cursor, a cursor of another store, and a deletions cursor', async () => {
      const a = (await stores.create({ name: 'Cursor A' })).id;
      const b = (await stores.create({ name: 'Cursor B' })).id;
      await stores.putOk(a, 'x', {});
      const cursorOf = (link: string) => new URL(link).searchParams.get('page[after]')!;
      const fromA = cursorOf((await t.request('GET', feed(a))).body.links.next);
      const fromDeletions = cursorOf((await t.request('GET', `/api/v1/stores/${a}/deletions`)).body.links.next);
      const [payload, tag] = fromA.split('.');
      const forged = `${Buffer.from(Buffer.from(payload!, 'base64url').toString().replace('"x"', '"w"')).toString('base64url')}.${tag}`;
      for (const [cursor, store, detail] of [
        [fromA, b, "page[after] is a cursor of another store's feed"],
        [forged, a, 'page[after] is not a valid cursor; use the links.next of a previous page of this feed'],
        ['garbage', a, 'page[after] is not a valid cursor; use the links.next of a previous page of this feed'],
        [fromDeletions, a, "page[after] is a cursor of the store's deletions feed, not of its rows feed"],
      ] as const) {
        const res = await t.request('GET', feed(store, `?page[after]=${encodeURIComponent(cursor)}`));
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([
          expect.objectContaining({ code: 'invalid_query_parameter', detail, source: { parameter: 'page[after]' } }),
        ]);
      }
    });
  });

  describe('query', () => {
    let store: string;
    const workflow = newId();
    beforeAll(async () => {
      store = (
        await stores.create({
          name: 'Filtered',
          schema: {
            type: 'object',
            properties: {
              status: { type: 'string' },
              amount: { type: 'integer' },
              price: { type: ['number', 'null'] },
              paid: { type: 'boolean' },
              'unit price': { type: 'number' },
              meta: { type: 'object' },
              tag: { enum: ['x'] },
            },
          },
        })
      ).id;
      t.clock.set('2026-11-10T00:00:00.000000Z');
      await stores.putOk(store, 'o1', { status: 'paid', amount: 10, price: 1.5, paid: true, 'unit price': 2 });
      await stores.putOk(store, 'o2', { status: 'open', amount: 3, price: null, paid: false });
      await stores.putOk(store, 'o3', { status: 'Paid', amount: 1e20, paid: true, meta: { a: 1 } });
      t.clock.set('2026-11-11T00:00:00.000000Z');
      await t.deps.db.transaction().execute((trx) =>
        writeStoreRow(trx, t.deps.dialect, {
          workspaceId: t.workspaces.main,
          storeId: store,
          key: 'o4',
          row: { status: 'open', amount: 7 },
          workflowId: workflow,
          executionId: newId(),
          now: t.clock.now(),
          rowPointer: '/row',
        }),
      );
    });

    it.each([
      ['filter[row.status]=paid', ['o1']],
      ['filter[row.status][ilike]=paid', ['o1', 'o3']],
      ['filter[row.status][in]=paid,open', ['o1', 'o2', 'o4']],
      ['filter[row.amount][greater_than]=5', ['o1', 'o3', 'o4']],
      ['filter[row.amount][less_than_or_equal]=3', ['o2']],
      ['filter[row.price][eq]=1.5', ['o1']],
      ['filter[row.price][is_nil]=true', ['o2', 'o3', 'o4']],
      ['filter[row.paid]=true', ['o1', 'o3']],
      ['filter[row.paid][not_eq]=true', ['o2']],
      ['filter[row.unit price][greater_than]=1', ['o1']],
      ['filter[or][0][row.amount][eq]=3&filter[or][1][key][eq]=o4', ['o2', 'o4']],
      ['filter[not][row.status][eq]=open', ['o1', 'o3']],
      ['filter[key][string_starts_with]=o&filter[key][not_eq]=o1', ['o2', 'o3', 'o4']],
      ['filter[id][in]=o2,o3', ['o2', 'o3']],
      [`filter[workflow_id][eq]=${workflow}`, ['o4']],
      ['filter[workflow_id][is_nil]=true', ['o1', 'o2', 'o3']],
      ['filter[updated_at][greater_than_or_equal]=2026-11-11T00:00:00Z', ['o4']],
      ['filter[created_at][less_than]=2026-11-11T00:00:00Z', ['o1', 'o2', 'o3']],
      ['updated_since=2026-11-11T00:00:00Z', ['o4']],
      [`workflow_id=${workflow}`, ['o4']],
      ['sort=updated_at&filter[row.paid]=false', ['o2']],
    ])('%s', async (query, keys) => {
      const res = await t.request('GET', feed(store, `?${query}`));
      expect(res.status, res.raw).toBe(200);
      expect(keysOf(res.body.data)).toEqual(keys);
    });

    it('reads updated_since as inclusive, in any RFC 3339 spelling', async () => {
      const o2 = (await t.request('GET', `/api/v1/stores/${store}/rows/o2`)).body.data.attributes.updated_at as string;
      expect(keysOf((await t.request('GET', feed(store, `?updated_since=${o2}`))).body.data)).toEqual(['o2', 'o3', 'o4']);
      const offset = new Date(Date.parse(o2) + 3_600_000).toISOString().replace('Z', `${o2.slice(23, 26)}+01:00`);
      expect(keysOf((await t.request('GET', feed(store, `?updated_since=${encodeURIComponent(offset)}`))).body.data)).toEqual([
        'o2',
        'o3',
        'o4',
      ]);
    });

    it("keeps the caller's filters in links.next and counts on request", async () => {
      const res = await t.request('GET', feed(store, '?filter[row.paid]=true&page[limit]=1&page[count]=true&fields[store-row]=key'));
      expect(res.body.meta).toEqual({ count: 2 });
      expect(res.body.data).toEqual([expect.objectContaining({ id: 'o1', attributes: { key: 'o1' } })]);
      const next = await t.request('GET', relative(res.body.links.next));
      expect(keysOf(next.body.data)).toEqual(['o3']);
      expect(next.body.meta).toEqual({ count: 2 });
      const last = await t.request('GET', relative(next.body.links.next));
      expect(last.body.data).toEqual([]);
    });

    it.each([
      [
        'filter[row.nope]=1',
        'filter[row.nope]',
        "'row.nope' is not a field the store's schema declares; row filters apply to top-level properties declared with type string, integer, number or boolean",
      ],
      [
        'filter[row.meta][eq]={}',
        'filter[row.meta]',
        "'row.meta' cannot be filtered: the store's schema declares it, but its type is \"object\", not one of string, integer, number, boolean (optionally with null)",
      ],
      ['filter[row.tag]=x', 'filter[row.tag]', "'row.tag' cannot be filtered: the store's schema declares it, but it declares no \"type\""],
      ['filter[row][status]=paid', 'filter[row]', "filter on a row's fields with filter[row.<field>], e.g. filter[row.status][eq]=paid"],
      [
        'filter[and][0][row.nope]=1',
        'filter[and][0][row.nope]',
        "'row.nope' is not a field the store's schema declares; row filters apply to top-level properties declared with type string, integer, number or boolean",
      ],
      [
        'filter[row.amount][gt]=5',
        'filter[row.amount][gt]',
        "Unknown filter operator 'gt'; integer attributes take eq, not_eq, in, greater_than, greater_than_or_equal, less_than, less_than_or_equal, is_distinct_from, is_not_distinct_from, is_nil",
      ],
      ['filter[row.amount]=lots', 'filter[row.amount]', "'lots' is not an integer"],
      ['filter[row.paid]=yes', 'filter[row.paid]', "'yes' is not a boolean (true or false)"],
      [
        'filter[row.amount][ilike]=1',
        'filter[row.amount][ilike]',
        "Operator 'ilike' applies to string attributes only; 'row.amount' is integer",
      ],
      ['sort=key', 'sort', 'the row list is the change feed, ordered by updated_at then key: sort takes only updated_at'],
      ['sort=-updated_at', 'sort', 'the row list is the change feed, ordered by updated_at then key: sort takes only updated_at'],
      ['page[offset]=2', 'page[offset]', 'this feed pages with page[after] (the cursor in links.next), not offsets'],
      ['page[before]=x', 'page[before]', 'this feed pages forward only, with page[after] (the cursor in links.next)'],
      ['page[limit]=501', 'page[limit]', "page[limit] must be a whole number from 1 to 500, got '501'"],
      ['updated_since=yesterday', 'updated_since', 'updated_since must be an RFC 3339 timestamp, e.g. 2026-11-01T00:00:00Z'],
      ['workflow_id=nope', 'workflow_id', 'workflow_id must be a workflow id (UUID)'],
      ['fields[store-row]=id', 'fields[store-row]', "'id' is not an attribute of store-row"],
      ['include=store', 'include', 'cannot include "store": store-row has no relationships to include'],
      ['colour=red', 'colour', 'unknown query parameter "colour"'],
    ])('refuses %s with 400 naming the parameter', async (query, parameter, detail) => {
      const res = await t.request('GET', feed(store, `?${query}`));
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ code: 'invalid_query_parameter', detail, source: { parameter } })]);
    });
  });
});
