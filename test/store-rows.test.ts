import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const ORDER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: {
    status: { enum: ['open', 'paid'] },
    amount: { type: 'integer', minimum: 0 },
    lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] } },
  },
};

describeEachDialect('store rows', (dialect) => {
  let t: TestApp;
  let stores: ReturnType<typeof storeClient>;
  let orders: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    stores = storeClient(t);
    orders = (await stores.create({ name: 'Orders', schema: ORDER_SCHEMA })).id;
  });
  afterAll(() => t.close());

  describe('PUT', () => {
    it('inserts with 201 and a Location, replaces with 200, answering plain JSON', async () => {
      const inserted = await stores.put(orders, 'ord-1', { status: 'open', amount: 5 });
      expect(inserted.status).toBe(201);
      expect(inserted.headers['content-type']).toMatch(/^application\/json/);
      expect(inserted.headers.location).toBe(`http://sy.test/api/v1/stores/${orders}/rows/ord-1`);
      expect(inserted.body).toEqual({
        key: 'ord-1',
        row: { status: 'open', amount: 5 },
        created_at: inserted.body.created_at,
        updated_at: inserted.body.created_at,
        workflow_id: null,
        execution_id: null,
        created: true,
      });
      t.clock.advance(10);
      const replaced = await stores.put(orders, 'ord-1', { status: 'paid', amount: 5 });
      expect(replaced.status).toBe(200);
      expect(replaced.headers.location).toBeUndefined();
      expect(replaced.body).toMatchObject({
        key: 'ord-1',
        row: { status: 'paid', amount: 5 },
        created_at: inserted.body.created_at,
        created: false,
      });
      expect(replaced.body.updated_at > inserted.body.updated_at).toBe(true);
      const read = await t.request('GET', `/api/v1/stores/${orders}/rows/ord-1`);
      expect(read.body.data).toEqual({
        type: 'store-row',
        id: 'ord-1',
        attributes: {
          key: 'ord-1',
          row: { status: 'paid', amount: 5 },
          created_at: inserted.body.created_at,
          updated_at: replaced.body.updated_at,
          workflow_id: null,
          execution_id: null,
        },
        links: { self: `http://sy.test/api/v1/stores/${orders}/rows/ord-1` },
      });
      const store = await t.request('GET', `/api/v1/stores/${orders}?fields[store]=row_count,last_write_at`);
      expect(store.body.data.attributes).toEqual({ row_count: 1, last_write_at: replaced.body.updated_at });
    });

    it('refuses a row that violates the schema with one 422 error per violation, pointing into /data/row', async () => {
      const res = await stores.put(orders, 'bad', { status: 'lost', amount: -1, lines: [{ sku: 'a' }, {}], note: 'x' });
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { code: string; source: unknown; detail: string }) => [e.code, e.source, e.detail])).toEqual([
        ['validation_failed', { pointer: '/data/row/note' }, "row.note is not allowed by the store's schema"],
        ['validation_failed', { pointer: '/data/row/status' }, 'row.status must be one of "open", "paid"'],
        ['validation_failed', { pointer: '/data/row/amount' }, 'row.amount must be >= 0'],
        ['validation_failed', { pointer: '/data/row/lines/1/sku' }, 'row.lines[1].sku is required'],
      ]);
      expect((await t.request('GET', `/api/v1/stores/${orders}/rows/bad`)).status).toBe(404);
    });

    it.each([
      [{ data: { row: 'text' } }, 422, 'validation_failed', '/data/row', 'row must be a JSON object'],
      [{ data: { row: [1] } }, 422, 'validation_failed', '/data/row', 'row must be a JSON object'],
      [{ data: {} }, 422, 'validation_failed', '/data/row', 'row is required'],
      [
        { data: { row: {}, extra: 1 } },
        422,
        'validation_failed',
        '/data/extra',
        'unknown member "extra": the body takes row (and optionally mode)',
      ],
      [
        { data: { row: {}, mode: 'delete' } },
        422,
        'validation_failed',
        '/data/mode',
        'mode must be one of upsert, insert, update (DELETE removes a row)',
      ],
      [
        { data: { row: { status: 'open', lines: [{ sku: 'a\u0000b' }] } } },
        422,
        'validation_failed',
        '/data/row/lines/0/sku',
        'the string at /data/row/lines/0/sku contains the NUL character, which cannot be stored',
      ],
    ])('refuses the body %j', async (body, status, code, pointer, detail) => {
      const res = await t.request('PUT', `/api/v1/stores/${orders}/rows/body-check`, { body });
      expect(res.status).toBe(status);
      expect(res.body.errors[0]).toMatchObject({ code, detail, source: { pointer } });
    });

    it('insert mode refuses an existing key with 409 row_exists; update mode a missing one with 404 row_not_found', async () => {
      expect((await stores.put(orders, 'moded', { status: 'open' }, { mode: 'insert' })).status).toBe(201);
      const again = await stores.put(orders, 'moded', { status: 'paid' }, { mode: 'insert' });
      expect(again.status).toBe(409);
      expect(again.body.errors[0]).toMatchObject({
        code: 'row_exists',
        detail: 'a row with key "moded" already exists in this store; PUT without mode "insert" replaces it',
      });
      expect((await stores.put(orders, 'moded', { status: 'paid' }, { mode: 'update' })).status).toBe(200);
      const missing = await stores.put(orders, 'never', { status: 'paid' }, { mode: 'update' });
      expect(missing.status).toBe(404);
      expect(missing.body.errors[0]).toMatchObject({ code: 'row_not_found', detail: 'no row with key "never" in this store' });
      expect((await t.request('GET', `/api/v1/stores/${orders}/rows/moded`)).body.data.attributes.row).toEqual({ status: 'paid' });
    });

    it('answers 404 for an unknown store', async () => {
      const res = await stores.put('0190f2a0-0000-7000-8000-000000000000', 'k', {});
      expect(res.status).toBe(404);
      expect(res.body.errors[0]).toMatchObject({ code: 'not_found', detail: 'store not found' });
    });

    // Found by the fuzz test: a NUL byte reached PostgreSQL as the store id (500).
    it.each(['%00', 'not-an-id', 'a%00b'])('answers 404 for the store id %j on every row and store route', async (id) => {
      const requests = [
        ['PUT', `/api/v1/stores/${id}/rows/k`, { body: { data: { row: {} } } }],
        ['GET', `/api/v1/stores/${id}/rows/k`, {}],
        ['DELETE', `/api/v1/stores/${id}/rows/k`, {}],
        ['GET', `/api/v1/stores/${id}/rows`, {}],
        ['GET', `/api/v1/stores/${id}`, {}],
        ['PATCH', `/api/v1/stores/${id}`, { body: { data: { type: 'store', id: decodeURIComponent(id), attributes: { name: 'x' } } } }],
        ['DELETE', `/api/v1/stores/${id}`, {}],
        ['GET', `/api/v1/stores/${id}/deletions`, {}],
      ] as const;
      for (const [method, url, options] of requests) {
        const res = await t.request(method, url, options);
        // A PATCH body naming the store carries the NUL too: refused as text first (422).
        const expected = method === 'PATCH' && id.includes('%00') ? 422 : 404;
        expect(res.status, `${method} ${url}: ${res.raw}`).toBe(expected);
      }
    });
  });

  describe('keys', () => {
    it.each([
      'a/b',
      'with space',
      'emoji 😀 and ünï',
      '100%',
      '%25 literally',
      'a?b#c&d=e',
      'trailing/',
      '/leading',
      '+plus+',
      '.hidden',
      '...',
      'k'.repeat(512),
      '😀'.repeat(512),
    ])('round-trips %j through the path', async (key) => {
      const put = await stores.put(orders, key, { status: 'open' });
      expect(put.status, put.raw).toBe(201);
      expect(put.body.key).toBe(key);
      const read = await t.request('GET', stores.rowPath(orders, key));
      expect(read.status).toBe(200);
      expect(read.body.data.id).toBe(key);
      expect(read.body.data.links.self).toBe(`http://sy.test${stores.rowPath(orders, key)}`);
      expect((await stores.remove(orders, key)).status).toBe(204);
      expect((await t.request('GET', stores.rowPath(orders, key))).status).toBe(404);
    });

    it.each([
      ['a key of 513 characters', `/rows/${'k'.repeat(513)}`, 'the key must be at most 512 characters'],
      ['a key far past the router limit', `/rows/${'%F0%9F%98%80'.repeat(700)}`, 'the key must be at most 512 characters'],
      ['invalid UTF-8', '/rows/%FF%FE', 'the key in the path is not valid percent-encoded UTF-8'],
      ['a truncated UTF-8 sequence', '/rows/abc%E0%A4', 'the key in the path is not valid percent-encoded UTF-8'],
      ['an encoded surrogate', '/rows/%ED%A0%80', 'the key in the path is not valid percent-encoded UTF-8'],
      ['NUL', '/rows/a%00b', 'the key must not contain the NUL character'],
    ])('refuses %s with 400 invalid_key naming the key parameter, on PUT, GET and DELETE', async (_case, suffix, detail) => {
      for (const method of ['PUT', 'GET', 'DELETE'] as const) {
        const res = await t.request(
          method,
          `/api/v1/stores/${orders}${suffix}`,
          method === 'PUT' ? { body: { data: { row: { status: 'open' } } } } : {},
        );
        expect(res.status, `${method} ${res.raw}`).toBe(400);
        expect(res.body.errors).toEqual([expect.objectContaining({ code: 'invalid_key', detail, source: { parameter: 'key' } })]);
      }
    });

    it('refuses an empty key on PUT and DELETE (GET of the bare path is the row list)', async () => {
      for (const method of ['PUT', 'DELETE'] as const) {
        const res = await t.request(
          method,
          `/api/v1/stores/${orders}/rows/`,
          method === 'PUT' ? { body: { data: { row: { status: 'open' } } } } : {},
        );
        expect(res.status).toBe(400);
        expect(res.body.errors[0]).toMatchObject({
          code: 'invalid_key',
          detail: 'the key must not be empty: address a row as /stores/:store_id/rows/:key',
          source: { parameter: 'key' },
        });
      }
    });

    it('checks the token before the key: a read token cannot write even a bad key', async () => {
      const res = await t.request('PUT', `/api/v1/stores/${orders}/rows/`, { token: t.tokens.read, body: { data: { row: {} } } });
      expect(res.status).toBe(403);
    });
  });

  describe('GET and DELETE', () => {
    it('reads a row with sparse fields, and refuses include', async () => {
      await stores.putOk(orders, 'fields', { status: 'open' });
      const res = await t.request('GET', `/api/v1/stores/${orders}/rows/fields?fields[store-row]=row`);
      expect(res.body.data.attributes).toEqual({ row: { status: 'open' } });
      const include = await t.request('GET', `/api/v1/stores/${orders}/rows/fields?include=store`);
      expect(include.status).toBe(400);
      expect(include.body.errors[0].source).toEqual({ parameter: 'include' });
    });

    it('deletes a row (204) and answers 404 row_not_found for a key not in the store', async () => {
      await stores.putOk(orders, 'to-delete', { status: 'open' });
      const before = (await t.request('GET', `/api/v1/stores/${orders}?fields[store]=row_count`)).body.data.attributes.row_count;
      expect((await stores.remove(orders, 'to-delete')).status).toBe(204);
      expect((await t.request('GET', `/api/v1/stores/${orders}?fields[store]=row_count`)).body.data.attributes.row_count).toBe(before - 1);
      const again = await stores.remove(orders, 'to-delete');
      expect(again.status).toBe(404);
      expect(again.body.errors[0]).toMatchObject({ code: 'row_not_found', detail: 'no row with key "to-delete" in this store' });
      const read = await t.request('GET', `/api/v1/stores/${orders}/rows/to-delete`);
      expect(read.status).toBe(404);
      expect(read.body.errors[0].code).toBe('row_not_found');
    });
  });

  describe('row cap', () => {
    it('lets exactly row_cap of 30 concurrent inserts succeed; the rest get 422 row_cap_exceeded', async () => {
      const store = (await stores.create({ name: 'Tiny', row_cap: 10 })).id;
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => stores.put(store, `k${i}`, { i })));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(10);
      expect(statuses.filter((s) => s === 422)).toHaveLength(20);
      for (const refused of results.filter((r) => r.status === 422)) {
        expect(refused.body.errors).toEqual([expect.objectContaining({ code: 'row_cap_exceeded', meta: { row_count: 10, row_cap: 10 } })]);
      }
      const count = await t.request('GET', `/api/v1/stores/${store}?fields[store]=row_count`);
      expect(count.body.data.attributes.row_count).toBe(10);
      const feed = await t.request('GET', `/api/v1/stores/${store}/rows?page[count]=true`);
      expect(feed.body.meta.count).toBe(10);

      // At the cap, replaces always succeed, also concurrently with refused inserts.
      const written = results.filter((r) => r.status === 201).map((r) => r.body.key as string);
      const mixed = await Promise.all([
        ...written.map((key) => stores.put(store, key, { replaced: true })),
        ...Array.from({ length: 10 }, (_, i) => stores.put(store, `new${i}`, {})),
      ]);
      expect(mixed.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(mixed.slice(10).map((r) => r.status)).toEqual(Array(10).fill(422));

      // A delete frees one place.
      expect((await stores.remove(store, written[0]!)).status).toBe(204);
      expect((await stores.put(store, 'after-delete', {})).status).toBe(201);
      expect((await stores.put(store, 'one-too-many', {})).status).toBe(422);
    });
  });
});
