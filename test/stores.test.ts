import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describeEachDialect('stores', (dialect) => {
  let t: TestApp;
  let stores: ReturnType<typeof storeClient>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    stores = storeClient(t);
  });
  afterAll(() => t.close());

  describe('create and read', () => {
    it('creates a store with defaults: slug from the name, an object schema, the default cap', async () => {
      const res = await t.request('POST', '/api/v1/stores', { body: { data: { type: 'store', attributes: { name: 'Paid Orders' } } } });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`http://sy.test/api/v1/stores/${res.body.data.id}`);
      expect(res.body.data).toMatchObject({
        type: 'store',
        attributes: {
          name: 'Paid Orders',
          slug: 'paid-orders',
          description: null,
          schema: { type: 'object' },
          row_count: 0,
          row_cap: 100_000,
        },
      });
      const read = await t.request(
        'GET',
        `/api/v1/stores/${res.body.data.id}?fields[store]=name,schema_version,last_write_at,workspace_id`,
      );
      expect(read.body.data.attributes).toEqual({
        name: 'Paid Orders',
        schema_version: 1,
        last_write_at: null,
        workspace_id: t.workspaces.main,
      });
    });

    it('accepts the flat body, a description, a schema and a cap', async () => {
      const schema = { type: 'object', properties: { email: { type: 'string', format: 'email' } }, required: ['email'] };
      const res = await t.request('POST', '/api/v1/stores', {
        body: { data: { name: 'Leads', description: 'from the form', schema, row_cap: 500 } },
      });
      expect(res.status).toBe(201);
      expect(res.body.data.attributes).toMatchObject({ slug: 'leads', description: 'from the form', schema, row_cap: 500 });
    });

    it('derives -2, -3 … when the slug a name suggests is taken', async () => {
      const first = await stores.create({ name: 'Invoices' });
      const second = await stores.create({ name: 'invoices!' });
      const third = await stores.create({ name: 'INVOICES' });
      expect([first.attributes.slug, second.attributes.slug, third.attributes.slug]).toEqual(['invoices', 'invoices-2', 'invoices-3']);
    });

    it('derives distinct slugs for concurrent creates of one name', async () => {
      const created = await Promise.all(
        Array.from({ length: 6 }, () => t.request('POST', '/api/v1/stores', { body: { data: { name: 'Race' } } })),
      );
      expect(created.map((r) => r.status)).toEqual(Array(6).fill(201));
      expect(created.map((r) => r.body.data.attributes.slug).sort()).toEqual(['race', 'race-2', 'race-3', 'race-4', 'race-5', 'race-6']);
    });

    it('refuses an explicit slug that is taken with 409 slug_taken', async () => {
      await stores.create({ name: 'Customers', slug: 'crm' });
      const res = await t.request('POST', '/api/v1/stores', {
        body: { data: { type: 'store', attributes: { name: 'Other', slug: 'crm' } } },
      });
      expect(res.status).toBe(409);
      expect(res.body.errors[0]).toMatchObject({
        code: 'slug_taken',
        detail: 'another store of this workspace has the slug "crm"',
        source: { pointer: '/data/attributes/slug' },
      });
    });

    it('lets another workspace use the same slug', async () => {
      await stores.create({ name: 'Shared', slug: 'shared' });
      const res = await t.request('POST', '/api/v1/stores', { token: t.tokens.other, body: { data: { name: 'Shared', slug: 'shared' } } });
      expect(res.status).toBe(201);
      expect(res.body.data.attributes.slug).toBe('shared');
    });

    it.each([
      [
        { slug: 'Bad Slug' },
        '/data/attributes/slug',
        'slug must be 1 to 64 lower-case letters, digits and dashes, starting and ending with a letter or digit',
      ],
      [{ row_cap: 0 }, '/data/attributes/row_cap', "row_cap must be a whole number from 1 to 10000000 (this server's maximum)"],
      [{ row_cap: 10_000_001 }, '/data/attributes/row_cap', "row_cap must be a whole number from 1 to 10000000 (this server's maximum)"],
      [{ row_cap: 2.5 }, '/data/attributes/row_cap', "row_cap must be a whole number from 1 to 10000000 (this server's maximum)"],
      [{ row_count: 3 }, '/data/attributes/row_count', 'row_count cannot be set: a store takes name, slug, description, schema, row_cap'],
      [
        { schema: { type: 'array' } },
        '/data/attributes/schema/type',
        'schema must describe an object: its top-level "type" must be "object"',
      ],
      [
        { schema: { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } } },
        '/data/attributes/schema/properties/a/$ref',
        '$ref must point inside the schema ("#/$defs/…"); remote references are not supported',
      ],
      [
        { schema: { type: 'object', properties: { a: { type: 'text' } } } },
        '/data/attributes/schema/properties/a/type',
        'schema at /properties/a/type must be one of "array", "boolean", "integer", "null", "number", "object", "string"',
      ],
      [
        { schema: { type: 'object', properties: { a: { type: 'string', pattern: '[' } } } },
        '/data/attributes/schema',
        'schema does not compile: Invalid regular expression: /[/u: Unterminated character class',
      ],
    ])('refuses %j with 422 and a pointer', async (attributes, pointer, detail) => {
      const res = await t.request('POST', '/api/v1/stores', {
        body: { data: { type: 'store', attributes: { name: 'Bad', ...attributes } } },
      });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ code: 'validation_failed', detail, source: { pointer } })]);
    });

    it('requires a name', async () => {
      const res = await t.request('POST', '/api/v1/stores', { body: { data: { type: 'store', attributes: {} } } });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ detail: 'name is required', source: { pointer: '/data/attributes/name' } });
    });

    it('answers 404 for an unknown or malformed id', async () => {
      for (const id of ['0190f2a0-0000-7000-8000-000000000000', 'not-a-uuid']) {
        const res = await t.request('GET', `/api/v1/stores/${id}`);
        expect(res.status).toBe(404);
        expect(res.body.errors[0]).toMatchObject({ code: 'not_found', detail: 'store not found' });
      }
    });
  });

  describe('list', () => {
    it("lists the workspace's stores oldest first, with filter, sort, page and fields", async () => {
      const own = await createTestApp(dialect);
      try {
        const client = storeClient(own);
        for (const name of ['Alpha', 'Beta', 'Gamma']) {
          await client.create({ name });
          own.clock.advance(1000);
        }
        const list = await own.request('GET', '/api/v1/stores');
        expect(list.body.data.map((s: { attributes: { name: string } }) => s.attributes.name)).toEqual(['Alpha', 'Beta', 'Gamma']);
        const filtered = await own.request('GET', '/api/v1/stores?filter[slug][string_starts_with]=g&fields[store]=slug');
        expect(filtered.body.data.map((s: { attributes: unknown }) => s.attributes)).toEqual([{ slug: 'gamma' }]);
        const sorted = await own.request('GET', '/api/v1/stores?sort=-name&page[limit]=2&page[count]=true');
        expect(sorted.body.data.map((s: { attributes: { name: string } }) => s.attributes.name)).toEqual(['Gamma', 'Beta']);
        expect(sorted.body.meta).toEqual({ count: 3 });
        expect((await own.request('GET', '/api/v1/stores', { token: own.tokens.other })).body.data).toEqual([]);
      } finally {
        await own.close();
      }
    });
  });

  describe('change', () => {
    it('renames, re-slugs and describes a store; slug and name stay independent', async () => {
      const store = await stores.create({ name: 'Renamable' });
      t.clock.advance(5);
      const res = await stores.patch(store.id, { name: 'Renamed', slug: 'renamed-store', description: 'now described' });
      expect(res.status).toBe(200);
      expect(res.body.data.attributes).toMatchObject({ name: 'Renamed', slug: 'renamed-store', description: 'now described' });
      expect(res.body.data.attributes.updated_at > store.attributes.updated_at).toBe(true);
      expect((await stores.patch(store.id, { description: null })).body.data.attributes.description).toBeNull();
    });

    it('refuses a taken slug with 409 and an unknown attribute with 422', async () => {
      await stores.create({ name: 'Taken', slug: 'taken' });
      const store = await stores.create({ name: 'Mover' });
      const taken = await stores.patch(store.id, { slug: 'taken' });
      expect(taken.status).toBe(409);
      expect(taken.body.errors[0]).toMatchObject({ code: 'slug_taken', source: { pointer: '/data/attributes/slug' } });
      const unknown = await stores.patch(store.id, { row_count: 5 });
      expect(unknown.status).toBe(422);
      expect(unknown.body.errors[0].source.pointer).toBe('/data/attributes/row_count');
      const mismatch = await t.request('PATCH', `/api/v1/stores/${store.id}`, {
        body: { data: { type: 'workflow', id: store.id, attributes: { name: 'x' } } },
      });
      expect(mismatch.status).toBe(409);
      expect(mismatch.body.errors[0].code).toBe('type_mismatch');
    });

    it('raises and lowers row_cap, but never below the row count', async () => {
      const store = await stores.create({ name: 'Capped', row_cap: 5 });
      for (const key of ['a', 'b', 'c']) await stores.putOk(store.id, key, {});
      expect((await stores.patch(store.id, { row_cap: 3 })).body.data.attributes.row_cap).toBe(3);
      const lower = await stores.patch(store.id, { row_cap: 2 });
      expect(lower.status).toBe(422);
      expect(lower.body.errors[0]).toMatchObject({
        code: 'validation_failed',
        detail: "row_cap cannot be lower than the store's 3 rows; delete rows first",
        source: { pointer: '/data/attributes/row_cap' },
      });
      const over = await stores.patch(store.id, { row_cap: 10_000_001 });
      expect(over.status).toBe(422);
      expect(over.body.errors[0].source.pointer).toBe('/data/attributes/row_cap');
    });

    it('bumps schema_version only when the schema really changes', async () => {
      const store = await stores.create({ name: 'Versions', schema: { type: 'object' } });
      const same = await t.request('PATCH', `/api/v1/stores/${store.id}?fields[store]=schema_version`, {
        body: { data: { type: 'store', id: store.id, attributes: { schema: { type: 'object' } } } },
      });
      expect(same.body.data.attributes.schema_version).toBe(1);
      const changed = await t.request('PATCH', `/api/v1/stores/${store.id}?fields[store]=schema_version,schema`, {
        body: { data: { type: 'store', id: store.id, attributes: { schema: { type: 'object', properties: { a: { type: 'string' } } } } } },
      });
      expect(changed.body.data.attributes).toEqual({
        schema_version: 2,
        schema: { type: 'object', properties: { a: { type: 'string' } } },
      });
    });

    it('accepts a schema every row satisfies, and new writes follow it', async () => {
      const store = await stores.create({ name: 'Tightened' });
      await stores.putOk(store.id, 'one', { status: 'paid', amount: 1 });
      await stores.putOk(store.id, 'two', { status: 'open', amount: 2 });
      const schema = {
        type: 'object',
        required: ['status'],
        properties: { status: { enum: ['open', 'paid'] }, amount: { type: 'integer' } },
      };
      const res = await stores.patch(store.id, { schema });
      expect(res.status).toBe(200);
      const refused = await stores.put(store.id, 'three', { amount: 3 });
      expect(refused.status).toBe(422);
      expect(refused.body.errors[0]).toMatchObject({ detail: 'row.status is required', source: { pointer: '/data/row/status' } });
    });

    it('refuses a schema some rows violate, with the count and the first keys, and changes nothing', async () => {
      const store = await stores.create({ name: 'Loose' });
      for (let i = 0; i < 14; i++) await stores.putOk(store.id, `bad-${String(i).padStart(2, '0')}`, { amount: 'many' });
      await stores.putOk(store.id, 'good', { amount: 3 });
      const res = await stores.patch(store.id, { name: 'Strict', schema: { type: 'object', properties: { amount: { type: 'integer' } } } });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([
        expect.objectContaining({
          code: 'schema_violated_by_rows',
          detail: '14 rows violate the new schema (key "bad-00": row.amount must be integer); change or delete them first',
          source: { pointer: '/data/attributes/schema' },
          meta: { violating_rows: 14, first_keys: Array.from({ length: 10 }, (_, i) => `bad-${String(i).padStart(2, '0')}`) },
        }),
      ]);
      const after = await t.request('GET', `/api/v1/stores/${store.id}?fields[store]=name,schema,schema_version`);
      expect(after.body.data.attributes).toEqual({ name: 'Loose', schema: { type: 'object' }, schema_version: 1 });
    });

    it('refuses an invalid schema before looking at rows', async () => {
      const store = await stores.create({ name: 'Guarded' });
      const res = await stores.patch(store.id, { schema: { type: 'object', properties: { a: { type: 'string', minLength: -1 } } } });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({
        code: 'validation_failed',
        source: { pointer: '/data/attributes/schema/properties/a/minLength' },
      });
    });
  });

  describe('delete', () => {
    it('answers 204, and the store is gone at once: reads, rows, lists, and its slug is free', async () => {
      const store = await stores.create({ name: 'Doomed', slug: 'doomed' });
      await stores.putOk(store.id, 'k', { a: 1 });
      expect((await t.request('DELETE', `/api/v1/stores/${store.id}`)).status).toBe(204);
      expect((await t.request('GET', `/api/v1/stores/${store.id}`)).status).toBe(404);
      expect((await t.request('GET', `/api/v1/stores/${store.id}/rows`)).status).toBe(404);
      expect((await t.request('GET', `/api/v1/stores/${store.id}/rows/k`)).status).toBe(404);
      expect((await stores.put(store.id, 'k2', {})).status).toBe(404);
      expect((await t.request('DELETE', `/api/v1/stores/${store.id}`)).status).toBe(404);
      const list = await t.request('GET', '/api/v1/stores?page[limit]=500');
      expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(store.id);
      const again = await stores.create({ name: 'Reborn', slug: 'doomed' });
      expect(again.attributes.slug).toBe('doomed');
      expect((await stores.create({ name: 'Doomed' })).attributes.slug).toBe('doomed-2');
    });
  });
});
