import http from 'node:http';
import { PassThrough } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepStoreAccess } from '../src/api/routes/stores/step-store-access.js';
import { RESTORE_LEASE_MS } from '../src/services/stores/dump/store-restore.js';
import { StoreSweeper } from '../src/services/stores/store-sweeper.js';
import { StoreRowRepository } from '../src/store/store-row-repository.js';
import { describeEachDialect } from './support/dialects.js';
import { storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const NDJSON = 'application/x-ndjson';
const HEADER = {
  format: 'service-store/v1',
  name: 'Orders',
  slug: 'orders',
  description: null,
  schema: { type: 'object', properties: { n: { type: 'integer' } } },
  row_cap: 100_000,
};
const UNKNOWN_ID = '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e';

/** NDJSON lines of rows `from` to `to` (exclusive): keys `k000000`…, rows `{n}`. */
function rowLines(from: number, to: number, at?: string): string {
  let text = '';
  for (let i = from; i < to; i++)
    text += `${JSON.stringify({ key: `k${String(i).padStart(6, '0')}`, row: { n: i }, ...(at ? { created_at: at, updated_at: at } : {}) })}\n`;
  return text;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeEachDialect('store restore', (dialect) => {
  let t: TestApp;
  let stores: ReturnType<typeof storeClient>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    stores = storeClient(t);
  });
  afterAll(() => t.close());

  const restore = (query: string, body: string | PassThrough, token = t.tokens.build) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/stores/restore?${query}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': NDJSON },
      payload: body,
    });
  /** A restore whose body the test writes as it goes; `answer` resolves when the server answers. */
  const streamedRestore = (query: string) => {
    const body = new PassThrough();
    return { body, answer: restore(query, body) };
  };
  const storeBySlug = (slug: string) =>
    t.deps.db.selectFrom('stores').selectAll().where('slug', '=', slug).where('deleted_at', 'is', null).executeTakeFirst();
  const rowCount = async (storeId: string) =>
    Number(
      (
        await t.deps.db
          .selectFrom('store_rows')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('store_id', '=', storeId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  describe('a store under restore', () => {
    it('is invisible until its last batch commits: not listed, not readable, not writable, its slug held', async () => {
      const restoring = streamedRestore('slug=half-done');
      restoring.body.write(`${JSON.stringify(HEADER)}\n${rowLines(0, 6000)}`);
      // The first batch (5,000 rows) has committed; the rest waits for the end of the body.
      await until(async () => {
        const store = await storeBySlug('half-done');
        return store !== undefined && (await rowCount(store.id)) >= 5000;
      }, 'the first batch');
      const id = (await storeBySlug('half-done'))!.id;

      const list = await t.request('GET', '/api/v1/stores?page[count]=true');
      expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(id);
      const unknown = await t.request('GET', `/api/v1/stores/${UNKNOWN_ID}`);
      for (const path of [
        `/api/v1/stores/${id}`,
        `/api/v1/stores/${id}/rows`,
        `/api/v1/stores/${id}/rows/k000001`,
        `/api/v1/stores/${id}/deletions`,
      ]) {
        const res = await t.request('GET', path);
        expect(res.status, path).toBe(404);
        expect(res.body.errors[0].detail).toBe(unknown.body.errors[0].detail);
      }
      expect(
        (await t.app.inject({ method: 'GET', url: `/api/v1/stores/${id}/dump`, headers: { authorization: `Bearer ${t.tokens.build}` } }))
          .statusCode,
      ).toBe(404);
      // Writers are refused before they touch a row: no cap, count or write time to disturb.
      expect((await stores.put(id, 'k999999', { n: 1 })).status).toBe(404);
      expect((await stores.put(id, 'k000001', { n: -1 })).status).toBe(404);
      expect((await stores.remove(id, 'k000002')).status).toBe(404);
      expect((await stores.patch(id, { row_cap: 1 })).status).toBe(404);
      expect((await t.request('DELETE', `/api/v1/stores/${id}`)).status).toBe(404);
      const access = stepStoreAccess(t.deps.db, t.deps.dialect);
      await expect(access.get({ workspaceId: t.workspaces.main, storeId: id, key: 'k000001' })).rejects.toMatchObject({
        code: 'store_not_found',
      });
      const taken = await t.request('POST', '/api/v1/stores', {
        body: { data: { type: 'store', attributes: { name: 'Clash', slug: 'half-done' } } },
      });
      expect(taken.status).toBe(409);
      expect(taken.body.errors[0]).toMatchObject({
        code: 'slug_taken',
        detail: 'a restore in progress is making a store with the slug "half-done"',
      });

      restoring.body.end(rowLines(6000, 7000));
      const res = await restoring.answer;
      expect(res.statusCode, res.body).toBe(201);
      expect(JSON.parse(res.body).meta).toMatchObject({ rows_imported: 7000, rows_failed: 0 });
      const store = await t.request('GET', `/api/v1/stores/${id}`);
      expect(store.body.data.attributes).toMatchObject({ slug: 'half-done', row_count: 7000 });
      expect((await t.request('GET', `/api/v1/stores/${id}/rows/k000001`)).body.data.attributes.row).toEqual({ n: 1 });
      expect((await t.request('GET', '/api/v1/stores')).body.data.map((s: { id: string }) => s.id)).toContain(id);
    }, 60_000);

    it("keeps the count exact and the last write time at the latest row's, so writes after it sort after every restored row", async () => {
      const later = '2030-01-01T00:00:00.000000Z';
      const earlier = '2020-01-01T00:00:00.000000Z';
      // The batch with the latest time comes first: the store's last write time must not go back.
      const body = `${JSON.stringify({ ...HEADER, row_cap: 5002 })}\n${rowLines(0, 5000, later)}${rowLines(5000, 5003, earlier)}`;
      const res = await restore('slug=times', body);
      expect(res.statusCode, res.body).toBe(201);
      const { data, meta } = JSON.parse(res.body);
      expect(meta).toMatchObject({ rows_imported: 5002, rows_failed: 1, failures: [{ line: 5004, key: 'k005002' }] });
      const stored = await t.deps.db
        .selectFrom('stores')
        .select(['row_count', 'last_write_at', 'restoring_until'])
        .where('id', '=', data.id)
        .executeTakeFirstOrThrow();
      expect(stored).toEqual({ row_count: 5002, last_write_at: later, restoring_until: null });
      expect(await rowCount(data.id)).toBe(5002);
      // At the cap: a new key is refused, a replace is not, and it sorts after every restored row.
      expect((await stores.put(data.id, 'new', { n: 1 })).body.errors[0].code).toBe('row_cap_exceeded');
      const replaced = await stores.put(data.id, 'k005000', { n: 0 });
      expect(replaced.status).toBe(200);
      expect(replaced.body.updated_at > later).toBe(true);
    }, 60_000);

    it('that fails (the client goes away mid-body) gives its store up: it never appears, and the slug is free again', async () => {
      const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const request = http.request(`${base}/api/v1/stores/restore?slug=broken`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': NDJSON },
      });
      request.on('error', () => undefined);
      request.write(`${JSON.stringify(HEADER)}\n${rowLines(0, 6000)}`);
      await until(async () => {
        const store = await storeBySlug('broken');
        return store !== undefined && (await rowCount(store.id)) >= 5000;
      }, 'the first batch');
      const id = (await storeBySlug('broken'))!.id;
      request.destroy();
      await until(async () => (await storeBySlug('broken')) === undefined, 'the restore to give up');
      expect(
        (await t.deps.db.selectFrom('stores').select('deleted_at').where('id', '=', id).executeTakeFirstOrThrow()).deleted_at,
      ).not.toBeNull();
      expect((await t.request('GET', `/api/v1/stores/${id}`)).status).toBe(404);
      expect((await stores.create({ name: 'Broken', slug: 'broken' })).attributes.slug).toBe('broken');
      await new StoreSweeper(t.deps.db, { clock: t.clock }).runOnce();
      expect(await rowCount(id)).toBe(0);
    }, 60_000);

    it('renews its lease with every batch, and one whose lease ran out is swept and then fails with 408', async () => {
      const sweeper = new StoreSweeper(t.deps.db, { clock: t.clock });
      const alive = streamedRestore('slug=slow');
      alive.body.write(`${JSON.stringify(HEADER)}\n`);
      await until(async () => (await storeBySlug('slow')) !== undefined, 'the store');
      const first = (await storeBySlug('slow'))!;
      t.clock.advance(RESTORE_LEASE_MS * 0.6);
      // Past half its lease, the restore commits what it holds (a short batch) to renew it.
      alive.body.write(rowLines(0, 5000));
      await until(async () => (await storeBySlug('slow'))!.restoring_until! > first.restoring_until!, 'the lease to be renewed');
      t.clock.advance(RESTORE_LEASE_MS * 0.6);
      await sweeper.runOnce();
      expect(await storeBySlug('slow')).toBeDefined();
      alive.body.end();
      const finished = await alive.answer;
      expect(finished.statusCode, finished.body).toBe(201);
      expect(JSON.parse(finished.body).data.attributes.row_count).toBe(5000);
      expect(await rowCount(first.id)).toBe(5000);

      const dead = streamedRestore('slug=stalled');
      dead.body.write(`${JSON.stringify(HEADER)}\n${rowLines(0, 10)}`);
      await until(async () => (await storeBySlug('stalled')) !== undefined, 'the store');
      const stalled = (await storeBySlug('stalled'))!.id;
      t.clock.advance(RESTORE_LEASE_MS + 1000);
      await sweeper.runOnce();
      expect(await t.deps.db.selectFrom('stores').select('id').where('id', '=', stalled).executeTakeFirst()).toBeUndefined();
      dead.body.end(rowLines(10, 20));
      const refused = await dead.answer;
      expect(refused.statusCode).toBe(408);
      expect(JSON.parse(refused.body).errors[0]).toMatchObject({
        code: 'request_timeout',
        detail: expect.stringContaining('the restore was abandoned'),
      });
      expect((await stores.create({ name: 'Stalled', slug: 'stalled' })).attributes.slug).toBe('stalled');
    }, 60_000);
  });

  describe('the answer', () => {
    it('names the store after the name parameter, else after the dump', async () => {
      const body = `${JSON.stringify(HEADER)}\n${rowLines(0, 2)}`;
      const named = await restore('slug=renamed&name=%20Orders%20(copy)%20', body);
      expect(named.statusCode, named.body).toBe(201);
      expect(JSON.parse(named.body).data.attributes).toMatchObject({ name: 'Orders (copy)', slug: 'renamed', row_count: 2 });
      expect(JSON.parse((await restore('slug=unnamed', body)).body).data.attributes.name).toBe('Orders');
      for (const query of ['slug=x&name=', `slug=x&name=${'n'.repeat(201)}`, 'slug=x&title=y']) {
        const res = await restore(query, body);
        expect(res.statusCode, query).toBe(400);
        expect(JSON.parse(res.body).errors[0]).toMatchObject({
          code: 'invalid_query_parameter',
          source: { parameter: query.includes('title') ? 'title' : 'name' },
        });
      }
      expect(await storeBySlug('x')).toBeUndefined();
    });

    it('is described so in OpenAPI: the store document with the report in meta, and the name parameter', async () => {
      const doc = (await t.request('GET', '/api/docs/openapi.json', { token: null })).body;
      const route = doc.paths['/api/v1/stores/restore'].post;
      expect(route.parameters.map((p: { name: string; required: boolean }) => [p.name, p.required])).toEqual([
        ['slug', true],
        ['name', false],
      ]);
      const answer = route.responses['201'].content['application/vnd.api+json'].schema;
      expect(answer.properties.data.properties.type.enum).toEqual(['store']);
      expect(Object.keys(answer.properties.meta.properties)).toEqual(['rows_imported', 'rows_failed', 'failures', 'duplicates']);
      expect(Object.keys(answer.properties.meta.properties.failures.items.properties)).toEqual(['line', 'key', 'errors']);
    });

    it('lists the first 1,000 failures and counts them all', async () => {
      const bad = Array.from({ length: 1005 }, (_, i) => JSON.stringify({ key: `bad-${i}`, row: { n: 'not a number' } })).join('\n');
      const res = await restore('slug=many-failures', `${JSON.stringify(HEADER)}\n${rowLines(0, 1)}${bad}\n`);
      expect(res.statusCode).toBe(201);
      const { meta } = JSON.parse(res.body);
      expect(meta.rows_imported).toBe(1);
      expect(meta.rows_failed).toBe(1005);
      expect(meta.failures).toHaveLength(1000);
      expect(meta.failures[0]).toEqual({ line: 3, key: 'bad-0', errors: [{ pointer: '/row/n', detail: 'row.n must be integer' }] });
      expect(meta.failures[999]).toMatchObject({ line: 1002, key: 'bad-999' });
    });

    it('reports a key repeated across two batches of 5,000 rows with every line, and keeps the last line', async () => {
      // Line 2 opens batch one; lines 5,003 to 5,005 repeat two of its keys in batch two.
      const lines = [
        JSON.stringify(HEADER),
        JSON.stringify({ key: 'twice', row: { n: 1 } }),
        rowLines(0, 5000).trimEnd(),
        JSON.stringify({ key: 'twice', row: { n: 2 } }),
        JSON.stringify({ key: 'k000000', row: { n: -1 } }),
        JSON.stringify({ key: 'twice', row: { n: 3 } }),
      ];
      const res = await restore('slug=repeats', lines.join('\n'));
      expect(res.statusCode, res.body).toBe(201);
      const { data, meta } = JSON.parse(res.body);
      expect(meta).toMatchObject({ rows_imported: 5001, rows_failed: 0 });
      expect(meta.duplicates).toEqual([
        { key: 'twice', lines: [2, 5003, 5005] },
        { key: 'k000000', lines: [3, 5004] },
      ]);
      expect(data.attributes.row_count).toBe(5001);
      expect((await t.request('GET', `/api/v1/stores/${data.id}/rows/twice`)).body.data.attributes.row).toEqual({ n: 3 });
      expect((await t.request('GET', `/api/v1/stores/${data.id}/rows/k000000`)).body.data.attributes.row).toEqual({ n: -1 });
    }, 60_000);

    it('fills the row cap across the 500-row statements of a batch, and fails each row past it', async () => {
      const res = await restore('slug=capped', `${JSON.stringify({ ...HEADER, row_cap: 700 })}\n${rowLines(0, 1000)}`);
      expect(res.statusCode, res.body.slice(0, 300)).toBe(201);
      const { data, meta } = JSON.parse(res.body);
      expect(meta).toMatchObject({ rows_imported: 700, rows_failed: 300, duplicates: [] });
      expect(meta.failures).toHaveLength(300);
      expect(meta.failures[0]).toEqual({
        line: 702,
        key: 'k000700',
        errors: [{ pointer: '', detail: "the store's row_cap (700) is reached" }],
      });
      expect(meta.failures[299]).toMatchObject({ line: 1001, key: 'k000999' });
      expect(data.attributes.row_count).toBe(700);
      expect(await rowCount(data.id)).toBe(700);
    });

    it('imports a batch once its rows reach 8 MiB, before 5,000 rows, and gives keys and rows of any Unicode back as sent', async () => {
      // Rows of 1,000,000 bytes: the ninth passes 8 MiB (8,388,608 bytes), and its batch commits.
      const filler = 'f'.repeat(1_000_000);
      const restoring = streamedRestore('slug=by-bytes');
      restoring.body.write(`${JSON.stringify(HEADER)}\n`);
      for (let i = 0; i < 9; i++) restoring.body.write(`${JSON.stringify({ key: `big-${i}`, row: { n: i, filler } })}\n`);
      await until(async () => {
        const store = await storeBySlug('by-bytes');
        return store !== undefined && (await rowCount(store.id)) === 9;
      }, 'the batch of 9 rows');
      // Lines 11 to 14, then a repeat of a key of the first batch (line 15) and of this one (line 16).
      const keys = ['é', 'e\u0301', '😀', 'ключ'];
      for (const [n, key] of keys.entries()) restoring.body.write(`${JSON.stringify({ key, row: { n, note: `${key} naïve € "\n` } })}\n`);
      restoring.body.end(
        `${JSON.stringify({ key: 'big-8', row: { n: 80 } })}\n${JSON.stringify({ key: '😀', row: { n: 99, note: 'again' } })}\n`,
      );
      const res = await restoring.answer;
      expect(res.statusCode, res.body.slice(0, 300)).toBe(201);
      const { data, meta } = JSON.parse(res.body);
      expect(meta).toEqual({
        rows_imported: 13,
        rows_failed: 0,
        failures: [],
        duplicates: [
          { key: '😀', lines: [13, 16] },
          { key: 'big-8', lines: [10, 15] },
        ],
      });
      expect(data.attributes.row_count).toBe(13);
      const rowOf = async (key: string) =>
        (await t.request('GET', `/api/v1/stores/${data.id}/rows/${encodeURIComponent(key)}`)).body.data.attributes.row;
      expect(await rowOf('big-8')).toEqual({ n: 80 });
      expect(await rowOf('big-7')).toEqual({ n: 7, filler });
      expect(await Promise.all(keys.map(rowOf))).toEqual([
        { n: 0, note: 'é naïve € "\n' },
        { n: 1, note: 'e\u0301 naïve € "\n' },
        { n: 99, note: 'again' },
        { n: 3, note: 'ключ naïve € "\n' },
      ]);
    }, 60_000);

    it('streams a body far over the 1 MiB JSON body limit (not 413)', async () => {
      const filler = 'f'.repeat(1000);
      let body = `${JSON.stringify({ ...HEADER, schema: { type: 'object' } })}\n`;
      for (let i = 0; i < 3000; i++) body += `${JSON.stringify({ key: `big-${i}`, row: { filler } })}\n`;
      expect(Buffer.byteLength(body)).toBeGreaterThan(2 * 1024 * 1024);
      const res = await restore('slug=big-body', body);
      expect(res.statusCode, res.body.slice(0, 300)).toBe(201);
      expect(JSON.parse(res.body).meta.rows_imported).toBe(3000);
    }, 60_000);
  });

  it('leaves the row list planned on its index: statistics gathered (PostgreSQL), and a cursor among rows of one time bounds the index range', async () => {
    // Rows without times all get the restore's time: the cursor's key must bound the range too.
    const res = await restore('slug=planned', `${JSON.stringify(HEADER)}\n${rowLines(0, 20_000)}`);
    expect(res.statusCode).toBe(201);
    const id = JSON.parse(res.body).data.id as string;
    const middle = await t.deps.db
      .selectFrom('store_rows')
      .select(['updated_at', 'key'])
      .where('store_id', '=', id)
      .where('key', '=', 'k010000')
      .executeTakeFirstOrThrow();
    const repo = new StoreRowRepository(t.deps.db, { id, workspace_id: t.workspaces.main });
    const page = repo.feedQuery({ after: { at: middle.updated_at, key: middle.key }, limit: 51, columns: ['key', 'row', 'updated_at'] });
    expect((await page.execute()).map((row) => row.key)).toEqual(
      Array.from({ length: 51 }, (_, i) => `k${String(10_001 + i).padStart(6, '0')}`),
    );
    const compiled = page.compile();
    if (dialect === 'postgres') {
      // ANALYZE ran: the planner knows the table's size (a never-analyzed table says -1).
      const stats = await sql<{ reltuples: number }>`select reltuples from pg_class where relname = 'store_rows'`.execute(t.deps.db);
      expect(Number(stats.rows[0]!.reltuples)).toBeGreaterThanOrEqual(20_000);
      const plan = await sql.raw<{ 'QUERY PLAN': string }>(`explain ${interpolate(compiled.sql, compiled.parameters)}`).execute(t.deps.db);
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Index Scan using store_rows_feed_idx/);
      expect(text).toMatch(/Index Cond: .*ROW\(updated_at, key\) >/);
      expect(text).not.toMatch(/Sort|Filter/);
    } else {
      const plan = await sql
        .raw<{ detail: string }>(`explain query plan ${interpolate(compiled.sql, compiled.parameters)}`)
        .execute(t.deps.db);
      expect(plan.rows.map((row) => row.detail)).toEqual([
        'SEARCH store_rows USING INDEX store_rows_feed_idx (store_id=? AND (updated_at,key)>(?,?))',
      ]);
    }
  }, 60_000);
});

/** The query with its parameters written in, for EXPLAIN (test values only: quoted strings and numbers). */
function interpolate(text: string, parameters: readonly unknown[]): string {
  let index = 0;
  return text.replace(/\$\d+|\?/g, (placeholder) => {
    const value = parameters[placeholder === '?' ? index++ : Number(placeholder.slice(1)) - 1];
    return typeof value === 'number' ? String(value) : `'${String(value).replaceAll("'", "''")}'`;
  });
}
