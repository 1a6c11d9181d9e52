import type { Kysely } from 'kysely';
import qs from 'qs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../src/api/jsonapi/cursor.js';
import { parseFilter } from '../src/api/jsonapi/filter.js';
import { applyFilter } from '../src/api/jsonapi/filter-sql.js';
import { runListQuery, type ListLinks } from '../src/api/jsonapi/list-query.js';
import { parsePage } from '../src/api/jsonapi/page.js';
import { parseSort } from '../src/api/jsonapi/sort.js';
import { AppError } from '../src/errors/app-error.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from './support/dialects.js';
import {
  WS_A,
  createGadgetTables,
  gadgetDefinition as gadget,
  gadgetId,
  gadgetNumber,
  type GadgetTables,
} from './support/gadget-fixture.js';
import { OPERATOR_CASES } from './support/gadget-filter-cases.js';

const QS = { depth: 10, arrayLimit: 100 };
const SCOPE = { column: 'workspace_id', value: WS_A };

function expectInvalid(error: unknown, parameter: string, detail: string): void {
  expect(error).toBeInstanceOf(AppError);
  const appError = error as AppError;
  expect({ code: appError.code, detail: appError.message, source: appError.items[0]?.source }).toEqual({
    code: 'invalid_query_parameter',
    detail,
    source: { parameter },
  });
}

describeEachDialect('JSON:API list queries', (dialectName) => {
  let handle: TestDatabase;
  let db: Kysely<GadgetTables>;

  beforeAll(async () => {
    handle = await createTestDatabase(dialectName, { migrate: false });
    db = handle.db.withTables<GadgetTables>() as unknown as Kysely<GadgetTables>;
    await createGadgetTables(db, handle.dialect);
  });
  afterAll(() => handle.close());

  const base = () => db.selectFrom('gadgets').selectAll().where('workspace_id', '=', WS_A);

  async function matching(query: string): Promise<number[]> {
    const filter = parseFilter(qs.parse(query, QS).filter, gadget);
    const rows = await applyFilter(base(), filter, gadget, handle.dialect, { scope: SCOPE }).orderBy('id').execute();
    return rows.map((row) => gadgetNumber(row.id));
  }

  /** One list request as a route would run it; links keep the non-page parameters. */
  async function list(query: string): Promise<{ rows: number[]; links: ListLinks; meta?: { count: number } }> {
    const { page, sort, filter, ...rest } = qs.parse(query, QS);
    const kept = qs.stringify({ ...rest, sort, filter }, { encodeValuesOnly: true });
    const result = await runListQuery({
      base: base(),
      definition: gadget,
      dialect: handle.dialect,
      filter: parseFilter(filter, gadget),
      sort: parseSort(sort, gadget),
      page: parsePage(page),
      scope: SCOPE,
      buildLink: (pageParams) => [kept, new URLSearchParams(pageParams).toString()].filter(Boolean).join('&'),
    });
    return { rows: result.rows.map((row) => gadgetNumber(row.id)), links: result.links, ...(result.meta ? { meta: result.meta } : {}) };
  }

  for (const [group, cases] of Object.entries(OPERATOR_CASES)) {
    describe(`${group} filters`, () => {
      it.each(cases)('%s matches rows %j', async (query, rows) => {
        expect(await matching(query)).toEqual(rows);
      });
    });
  }

  it('qualifies columns with the table alias, inside relation sub-selects too', async () => {
    const filter = parseFilter(qs.parse('filter[maker][parent][name]=Acme&filter[size]=small', QS).filter, gadget);
    const query = db.selectFrom('gadgets as g').select('g.id').where('g.workspace_id', '=', WS_A);
    const rows = await applyFilter(query, filter, gadget, handle.dialect, { scope: SCOPE, tableAlias: 'g' }).orderBy('g.id').execute();
    expect(rows.map((row) => gadgetNumber(row.id))).toEqual([10]);
  });

  it('refuses to compile a relation filter without a scope', () => {
    const filter = parseFilter({ maker: { name: 'Acme' } }, gadget);
    expect(() => applyFilter(base(), filter, gadget, handle.dialect, { scope: null })).toThrow(
      "relation filter 'maker' needs a scope: refusing an unscoped sub-select",
    );
  });

  describe('sorting', () => {
    it.each([
      ['name', [6, 5, 1, 10, 12, 2, 9, 11, 8, 7, 3, 4]],
      ['-count,name', [11, 4, 6, 5, 1, 10, 12, 2, 9, 3, 7, 8]],
      ['weight', [3, 7, 1, 10, 2, 9, 12, 5, 6, 11, 4, 8]],
      ['-weight', [8, 4, 11, 6, 5, 12, 9, 2, 10, 1, 7, 3]],
      ['active', [2, 4, 7, 9, 11, 12, 1, 3, 5, 6, 8, 10]],
      ['-active,-made_at', [8, 6, 5, 3, 10, 1, 12, 11, 9, 7, 4, 2]],
      ['made_at', [1, 10, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12]],
      ['size,-id', [11, 8, 5, 2, 12, 9, 6, 3, 10, 7, 4, 1]],
      ['maker_id', [1, 3, 8, 12, 2, 5, 10, 6, 4, 7, 9, 11]],
      ['-maker_id', [11, 9, 7, 4, 6, 10, 5, 2, 12, 8, 3, 1]],
      ['nickname', [11, 1, 9, 10, 5, 7, 3, 4, 2, 6, 8, 12]],
      ['-rank', [12, 10, 8, 6, 4, 2, 11, 9, 7, 5, 3, 1]],
      ['-id', [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]],
    ])('sort=%s orders rows %j, NULLs as the largest value and ties by id', async (sort, rows) => {
      expect((await list(`sort=${sort}&page[limit]=500`)).rows).toEqual(rows);
    });
  });

  describe('offset pages', () => {
    it('links next and prev by offset, keeping the other parameters', async () => {
      const first = await list('sort=made_at&page[limit]=5&page[offset]=0');
      expect(first).toEqual({ rows: [1, 10, 2, 3, 4], links: { next: 'sort=made_at&page%5Boffset%5D=5&page%5Blimit%5D=5' } });
      const second = await list(first.links.next!);
      expect(second.rows).toEqual([5, 6, 7, 8, 9]);
      expect(second.links).toEqual({
        next: 'sort=made_at&page%5Boffset%5D=10&page%5Blimit%5D=5',
        prev: 'sort=made_at&page%5Boffset%5D=0&page%5Blimit%5D=5',
      });
      const last = await list(second.links.next!);
      expect(last).toEqual({ rows: [11, 12], links: { prev: 'sort=made_at&page%5Boffset%5D=5&page%5Blimit%5D=5' } });
    });

    it('clamps prev to offset 0 and gives no next on an exactly full last page', async () => {
      expect(await list('sort=made_at&page[limit]=4&page[offset]=2')).toMatchObject({
        rows: [2, 3, 4, 5],
        links: { prev: 'sort=made_at&page%5Boffset%5D=0&page%5Blimit%5D=4' },
      });
      expect((await list('sort=made_at&page[limit]=4&page[offset]=8')).links).toEqual({
        prev: 'sort=made_at&page%5Boffset%5D=4&page%5Blimit%5D=4',
      });
    });

    it('pages by offset when a sort key is nullable, and refuses a cursor for it', async () => {
      const first = await list('sort=nickname&page[limit]=5');
      expect(first).toEqual({ rows: [11, 1, 9, 10, 5], links: { next: 'sort=nickname&page%5Boffset%5D=5&page%5Blimit%5D=5' } });
      const cursor = encodeCursor('gadget', parseSort('nickname', gadget), { id: gadgetId(5), nickname: 'p' });
      const error = await list(`sort=nickname&page[after]=${cursor}`).catch((e: unknown) => e);
      expectInvalid(
        error,
        'page[after]',
        "page[after] cannot be used with sort on 'nickname', which can be null; page with page[offset] instead",
      );
    });
  });

  describe('keyset pages', () => {
    async function walk(start: string, direction: 'next' | 'prev'): Promise<{ pages: number[][]; last: ListLinks }> {
      const pages: number[][] = [];
      let page = await list(start);
      pages.push(page.rows);
      while (page.links[direction]) {
        page = await list(page.links[direction]);
        pages.push(page.rows);
        if (pages.length > 20) throw new Error('walk does not end');
      }
      return { pages, last: page.links };
    }

    it.each([
      ['name', 5],
      ['-count,name', 5],
      ['weight', 4],
      ['-weight', 3],
      ['-active,-made_at', 5],
      ['made_at', 1],
      ['size,-count', 7],
      ['-id', 12],
    ])('walks sort=%s forward and back in pages of %i without skipping or repeating a row', async (sort, limit) => {
      const everything = (await list(`sort=${sort}&page[limit]=500`)).rows;
      expect(everything).toHaveLength(12);
      const forward = await walk(`sort=${sort}&page[limit]=${limit}`, 'next');
      expect(forward.pages.flat()).toEqual(everything);
      expect(forward.pages.map((page) => page.length)).toEqual(
        Array.from({ length: Math.ceil(12 / limit) }, (_, i) => Math.min(limit, 12 - i * limit)),
      );

      // Walking back from the last page retraces the forward pages exactly.
      const backward = forward.last.prev ? await walk(forward.last.prev, 'prev') : { pages: [], last: {} };
      expect(backward.pages.reverse()).toEqual(forward.pages.slice(0, -1));
      expect(backward.last.prev).toBeUndefined();
    });

    async function rowOf(n: number): Promise<Record<string, unknown>> {
      return db.selectFrom('gadgets').selectAll().where('id', '=', gadgetId(n)).executeTakeFirstOrThrow();
    }

    it('links cursor pages in both directions and keeps the filter', async () => {
      const first = await list('filter[active]=true&sort=-made_at&page[limit]=2');
      expect(first.rows).toEqual([8, 6]);
      expect(first.links.prev).toBeUndefined();
      expect(qs.parse(first.links.next!)).toMatchObject({ filter: { active: 'true' }, sort: '-made_at', page: { limit: '2' } });
      const second = await list(first.links.next!);
      expect(second.rows).toEqual([5, 3]);
      const third = await list(second.links.next!);
      expect(third).toMatchObject({ rows: [10, 1], links: { prev: expect.any(String) } });
      expect(third.links.next).toBeUndefined();
      const back = await list(third.links.prev!);
      expect(back.rows).toEqual([5, 3]);
      expect((await list(back.links.prev!)).rows).toEqual([8, 6]);
      expect((await list(back.links.next!)).rows).toEqual([10, 1]);
    });

    it('answers an empty page past either end with the links that still lead somewhere', async () => {
      const sort = parseSort('made_at', gadget);
      const afterLast = await list(`sort=made_at&page[limit]=3&page[after]=${encodeCursor('gadget', sort, await rowOf(12))}`);
      expect(afterLast).toEqual({ rows: [], links: {} });
      const beforeFirst = await list(`sort=made_at&page[limit]=3&page[before]=${encodeCursor('gadget', sort, await rowOf(1))}`);
      expect(beforeFirst).toEqual({ rows: [], links: { next: 'sort=made_at&page%5Blimit%5D=3' } });
      expect((await list(beforeFirst.links.next!)).rows).toEqual([1, 10, 2]);
    });

    it('refuses a cursor issued for another sort', async () => {
      const cursor = encodeCursor('gadget', parseSort('name', gadget), await rowOf(3));
      const error = await list(`sort=-name&page[before]=${cursor}`).catch((e: unknown) => e);
      expectInvalid(error, 'page[before]', 'page[before] was issued for another list or sort; this list is gadget sorted by -name,-id');
    });
  });

  describe('page[count]', () => {
    it('counts every row matching the filter, beyond the page, and keeps count in the links', async () => {
      const page = await list('filter[active]=true&page[limit]=2&page[count]=true&sort=made_at');
      expect(page.rows).toEqual([1, 10]);
      expect(page.meta).toEqual({ count: 6 });
      expect(qs.parse(page.links.next!)).toMatchObject({ page: { count: 'true', limit: '2' } });
      expect((await list(page.links.next!)).meta).toEqual({ count: 6 });
    });

    it('counts through relation filters and answers zero for no match, and is absent unless asked', async () => {
      expect((await list('filter[maker][name]=Acme&page[count]=true')).meta).toEqual({ count: 4 });
      expect((await list('filter[count][in]=&page[count]=true')).meta).toEqual({ count: 0 });
      expect((await list('page[count]=false')).meta).toBeUndefined();
    });
  });
});
