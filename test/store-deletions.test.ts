import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetentionPruner } from '../src/engine/retention.js';
import { newId } from '../src/lib/ids.js';
import { StoreSweeper, type SweepBatch } from '../src/services/stores/store-sweeper.js';
import { writeStoreRow } from '../src/store/store-write.js';
import { describeEachDialect } from './support/dialects.js';
import { keysOf, relative, storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describeEachDialect('store deletions', (dialect) => {
  let t: TestApp;
  let stores: ReturnType<typeof storeClient>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    stores = storeClient(t);
  });
  afterAll(() => t.close());

  const deletions = (storeId: string, query = '') => `/api/v1/stores/${storeId}/deletions${query}`;

  describe('deletions feed', () => {
    it('lists tombstones oldest first with a cursor, as plain JSON, and links.next on every page', async () => {
      const store = (await stores.create({ name: 'Tombs' })).id;
      for (const key of ['a', 'b', 'c']) await stores.putOk(store, key, {});
      for (const key of ['b', 'a', 'c']) expect((await stores.remove(store, key)).status).toBe(204);
      const first = await t.request('GET', deletions(store, '?page[limit]=2'));
      expect(first.status).toBe(200);
      expect(first.headers['content-type']).toMatch(/^application\/json/);
      expect(first.body.data.map((d: { key: string }) => d.key)).toEqual(['b', 'a']);
      expect(first.body.data[0]).toEqual({ key: 'b', deleted_at: expect.any(String), workflow_id: null });
      const second = await t.request('GET', relative(first.body.links.next));
      expect(second.body.data.map((d: { key: string }) => d.key)).toEqual(['c']);
      const empty = await t.request('GET', relative(second.body.links.next));
      expect(empty.body).toEqual({ data: [], links: { next: second.body.links.next } });
      await stores.putOk(store, 'd', {});
      await stores.remove(store, 'd');
      expect((await t.request('GET', relative(empty.body.links.next))).body.data.map((d: { key: string }) => d.key)).toEqual(['d']);
    });

    it("removes a key's tombstone when the key is written again, so the two feeds never disagree", async () => {
      const store = (await stores.create({ name: 'Revived' })).id;
      await stores.putOk(store, 'k', { v: 1 });
      await stores.remove(store, 'k');
      expect((await t.request('GET', deletions(store))).body.data.map((d: { key: string }) => d.key)).toEqual(['k']);
      await stores.putOk(store, 'k', { v: 2 });
      expect((await t.request('GET', deletions(store))).body.data).toEqual([]);
      const rows = await stores.drain(`/api/v1/stores/${store}/rows`);
      expect(rows.entries.map((e) => e.attributes.row)).toEqual([{ v: 2 }]);
      // Deleted again: one tombstone, the latest, after the write.
      await stores.remove(store, 'k');
      const tombs = (await t.request('GET', deletions(store))).body.data;
      expect(tombs).toHaveLength(1);
      expect(tombs[0].deleted_at > rows.entries[0].attributes.updated_at).toBe(true);
    });

    it('records the workflow that deleted a key, and filters by since (inclusive)', async () => {
      const store = (await stores.create({ name: 'By workflow' })).id;
      await stores.putOk(store, 'x', {});
      await stores.putOk(store, 'y', {});
      await stores.remove(store, 'x');
      const workflow = newId();
      await t.deps.db.transaction().execute((trx) =>
        writeStoreRow(trx, t.deps.dialect, {
          workspaceId: t.workspaces.main,
          storeId: store,
          key: 'y',
          mode: 'delete',
          workflowId: workflow,
          executionId: newId(),
          now: t.clock.now(),
          rowPointer: '/row',
        }),
      );
      const all = (await t.request('GET', deletions(store))).body.data;
      expect(all.map((d: { key: string; workflow_id: string | null }) => [d.key, d.workflow_id])).toEqual([
        ['x', null],
        ['y', workflow],
      ]);
      const since = await t.request('GET', deletions(store, `?since=${all[1].deleted_at}`));
      expect(since.body.data.map((d: { key: string }) => d.key)).toEqual(['y']);
    });

    it.each([
      ['since=soon', 'since', 'since must be an RFC 3339 timestamp, e.g. 2026-11-01T00:00:00Z'],
      ['page[offset]=1', 'page[offset]', 'this feed pages with page[after] (the cursor in links.next), not offsets'],
      ['page[count]=true', 'page[count]', 'the deletions feed has no count'],
      ['page[after]=nope', 'page[after]', 'page[after] is not a valid cursor; use the links.next of a previous page of this feed'],
      ['filter[key]=x', 'filter', 'unknown query parameter "filter"'],
    ])('refuses %s with 400', async (query, parameter, detail) => {
      const store = (await stores.create({ name: 'Strict feed' })).id;
      const res = await t.request('GET', deletions(store, `?${query}`));
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ code: 'invalid_query_parameter', detail, source: { parameter } });
    });

    it('refuses a rows cursor on the deletions feed', async () => {
      const store = (await stores.create({ name: 'Crossed' })).id;
      const rowsNext = (await t.request('GET', `/api/v1/stores/${store}/rows`)).body.links.next as string;
      const res = await t.request(
        'GET',
        deletions(store, `?page[after]=${encodeURIComponent(new URL(rowsNext).searchParams.get('page[after]')!)}`),
      );
      expect(res.status).toBe(400);
      expect(res.body.errors[0].detail).toBe("page[after] is a cursor of the store's rows feed, not of its deletions feed");
    });

    it('prunes tombstones past the retention period with the executions, and keeps newer ones', async () => {
      const store = (await stores.create({ name: 'Retained' })).id;
      t.clock.set('2026-11-01T00:00:00.000000Z');
      await stores.putOk(store, 'old', {});
      await stores.remove(store, 'old');
      t.clock.set('2026-11-20T00:00:00.000000Z');
      await stores.putOk(store, 'new', {});
      await stores.remove(store, 'new');
      await new RetentionPruner(t.deps.db, t.clock, 14).runOnce();
      expect((await t.request('GET', deletions(store))).body.data.map((d: { key: string }) => d.key)).toEqual(['new']);
      // 0 keeps them forever, as it keeps executions.
      t.clock.set('2027-01-20T00:00:00.000000Z');
      await new RetentionPruner(t.deps.db, t.clock, 0).runOnce();
      expect((await t.request('GET', deletions(store))).body.data.map((d: { key: string }) => d.key)).toEqual(['new']);
      t.clock.set('2026-11-21T00:00:00.000000Z');
    });
  });

  describe('deleting a store', () => {
    const rowsOf = async (storeId: string) =>
      Number(
        (
          await t.deps.db
            .selectFrom('store_rows')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('store_id', '=', storeId)
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('removes the rows and tombstones in batches in the background while other writers proceed', async () => {
      const doomed = (await stores.create({ name: 'Big', slug: 'big' })).id;
      const other = (await stores.create({ name: 'Busy neighbour' })).id;
      await t.deps.db.transaction().execute(async (trx) => {
        const rows = Array.from({ length: 2500 }, (_, i) => ({
          store_id: doomed,
          key: `r${i}`,
          row: '{}',
          created_at: '2026-11-01T00:00:00.000000Z',
          updated_at: '2026-11-01T00:00:00.000000Z',
          workflow_id: null,
          execution_id: null,
        }));
        for (let i = 0; i < rows.length; i += 500)
          await trx
            .insertInto('store_rows')
            .values(rows.slice(i, i + 500))
            .execute();
      });
      await stores.putOk(doomed, 'tomb', {});
      await stores.remove(doomed, 'tomb');
      expect((await t.request('DELETE', `/api/v1/stores/${doomed}`)).status).toBe(204);
      expect((await t.request('GET', `/api/v1/stores/${doomed}`)).status).toBe(404);
      expect((await stores.create({ name: 'Big again', slug: 'big' })).attributes.slug).toBe('big');

      const batches: SweepBatch[] = [];
      const between: { status: number; remaining: number }[] = [];
      const sweeper = new StoreSweeper(t.deps.db, {
        onBatch: async (batch) => {
          batches.push(batch);
          // Between two batches, a writer of another store goes through, and the sweep is not done.
          const put = await stores.put(other, `during-${batches.length}`, {});
          between.push({ status: put.status, remaining: await rowsOf(doomed) });
        },
      });
      expect(await sweeper.runOnce()).toBe(2501);
      expect(batches).toEqual([
        { storeId: doomed, table: 'store_rows', deleted: 1000 },
        { storeId: doomed, table: 'store_rows', deleted: 1000 },
        { storeId: doomed, table: 'store_rows', deleted: 500 },
        { storeId: doomed, table: 'store_deletions', deleted: 1 },
      ]);
      expect(between).toEqual([
        { status: 201, remaining: 1500 },
        { status: 201, remaining: 500 },
        { status: 201, remaining: 0 },
        { status: 201, remaining: 0 },
      ]);
      expect(await rowsOf(doomed)).toBe(0);
      expect(await t.deps.db.selectFrom('stores').select('id').where('id', '=', doomed).executeTakeFirst()).toBeUndefined();
      expect(await t.deps.db.selectFrom('store_deletions').select('key').where('store_id', '=', doomed).execute()).toEqual([]);
      expect(keysOf((await stores.drain(`/api/v1/stores/${other}/rows`)).entries)).toEqual([
        'during-1',
        'during-2',
        'during-3',
        'during-4',
      ]);
    });

    it('resumes after a stop: a new sweeper finishes what a stopped one left', async () => {
      const doomed = (await stores.create({ name: 'Interrupted' })).id;
      for (let i = 0; i < 5; i++) await stores.putOk(doomed, `k${i}`, {});
      await t.request('DELETE', `/api/v1/stores/${doomed}`);
      const first = new StoreSweeper(t.deps.db, { batchSize: 2, onBatch: (): Promise<void> => first.stop() });
      expect(await first.runOnce()).toBe(2);
      expect(await rowsOf(doomed)).toBe(3);
      // The API still hides it while its rows wait.
      expect((await t.request('GET', `/api/v1/stores/${doomed}/rows`)).status).toBe(404);
      await new StoreSweeper(t.deps.db, { batchSize: 2 }).runOnce();
      expect(await rowsOf(doomed)).toBe(0);
      expect(await t.deps.db.selectFrom('stores').select('id').where('id', '=', doomed).executeTakeFirst()).toBeUndefined();
    });

    it('sweeps on its own once serve starts it: when this process deletes a store', async () => {
      const doomed = (await stores.create({ name: 'Woken' })).id;
      await stores.putOk(doomed, 'k', {});
      t.deps.storeSweeper.start();
      try {
        await t.deps.storeSweeper.idle();
        expect(await rowsOf(doomed)).toBe(1);
        // The store service wakes the sweeper of its process when it deletes a store.
        await t.request('DELETE', `/api/v1/stores/${doomed}`);
        await t.deps.storeSweeper.idle();
        expect(await rowsOf(doomed)).toBe(0);
        expect(await t.deps.db.selectFrom('stores').select('id').where('id', '=', doomed).executeTakeFirst()).toBeUndefined();
      } finally {
        await t.deps.storeSweeper.stop();
      }
    });
  });
});
