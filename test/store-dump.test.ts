import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string' }, qty: { type: 'integer', minimum: 0 }, tags: { type: 'array', items: { type: 'string' } }, note: { type: 'string' } },
};
const NDJSON = 'application/x-ndjson';

describeEachDialect('store dump and restore', (dialect) => {
  let t: TestApp;
  let stores: ReturnType<typeof storeClient>;
  let storeId: string;
  const rows: Record<string, Record<string, unknown>> = {
    'a/b': { name: 'slash', qty: 1 },
    'with space': { name: 'quote " and, comma', qty: 2, tags: ['x', 'y'] },
    '🙂': { name: 'line\nbreak', note: 'emoji key' },
    '100%': { name: 'percent', qty: 0 },
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    stores = storeClient(t);
    storeId = (await stores.create({ name: 'Inventory', slug: 'inventory', description: 'things', schema: SCHEMA, row_cap: 500 })).id;
    for (const [key, row] of Object.entries(rows)) {
      t.clock.advance(3);
      await stores.putOk(storeId, key, row);
    }
  });
  afterAll(() => t.close());

  const dump = (id: string, format?: string, token = t.tokens.build) =>
    t.app.inject({ method: 'GET', url: `/api/v1/stores/${id}/dump${format ? `?format=${format}` : ''}`, headers: { authorization: `Bearer ${token}` } });
  const restore = (slug: string, body: string, token = t.tokens.build) =>
    t.app.inject({ method: 'POST', url: `/api/v1/stores/restore?slug=${slug}`, headers: { authorization: `Bearer ${token}`, 'content-type': NDJSON }, payload: body });
  const lines = (text: string) => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

  describe('dump', () => {
    it('writes NDJSON: the header line, then one {key, row, created_at, updated_at} per line in key order', async () => {
      const res = await dump(storeId);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      expect(res.body.endsWith('\n')).toBe(true);
      const [header, ...entries] = lines(res.body);
      expect(header).toEqual({ format: 'service-store/v1', name: 'Inventory', slug: 'inventory', description: 'things', schema: SCHEMA, row_cap: 500 });
      expect(entries.map((e) => e.key)).toEqual(Object.keys(rows).sort());
      for (const entry of entries) {
        expect(Object.keys(entry)).toEqual(['key', 'row', 'created_at', 'updated_at']);
        expect(entry.row).toEqual(rows[entry.key]);
      }
    });

    it('writes CSV with a column per declared field plus key and updated_at, RFC 4180 quoting and nested values as JSON', async () => {
      const res = await dump(storeId, 'csv');
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      const records = parse(res.body, { columns: true }) as Record<string, string>[];
      expect(Object.keys(records[0]!)).toEqual(['key', 'updated_at', 'name', 'qty', 'tags', 'note']);
      const byKey = Object.fromEntries(records.map((r) => [r.key, r]));
      expect(byKey['with space']).toMatchObject({ name: 'quote " and, comma', qty: '2', tags: '["x","y"]', note: '' });
      expect(byKey['🙂']).toMatchObject({ name: 'line\nbreak', note: 'emoji key', qty: '' });
      expect(Object.keys(byKey).sort()).toEqual(Object.keys(rows).sort());
    });

    it('writes JSON as one array of the same entries', async () => {
      const res = await dump(storeId, 'json');
      const entries = JSON.parse(res.body) as { key: string; row: unknown }[];
      expect(entries.map((e) => [e.key, e.row])).toEqual(Object.keys(rows).sort().map((k) => [k, rows[k]]));
      const empty = (await stores.create({ name: 'Empty' })).id;
      expect(JSON.parse((await dump(empty, 'json')).body)).toEqual([]);
    });

    it('answers 404 for another workspace and an unknown id alike, and 400 on an unknown format', async () => {
      const foreign = await dump(storeId, undefined, t.tokens.other);
      const unknown = await dump('0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e', undefined, t.tokens.other);
      expect(foreign.statusCode).toBe(404);
      expect(JSON.parse(foreign.body).errors[0].detail).toBe(JSON.parse(unknown.body).errors[0].detail);
      expect((await dump(storeId, 'xml')).statusCode).toBe(400);
    });
  });

  describe('restore', () => {
    it('dump -> restore -> dump gives identical rows in a new store', async () => {
      const first = (await dump(storeId)).body;
      const res = await restore('inventory-copy', first);
      expect(res.statusCode, res.body).toBe(201);
      const report = JSON.parse(res.body);
      expect(report).toMatchObject({ lines: 4, imported: 4, failed: 0, errors: [], duplicates: { count: 0, lines: [] }, store: { slug: 'inventory-copy', name: 'Inventory', row_count: 4 } });
      expect(report.store.id).not.toBe(storeId);
      const [, ...again] = (await dump(report.store.id)).body.split('\n');
      const [, ...before] = first.split('\n');
      expect(again).toEqual(before);
      const store = await t.request('GET', `/api/v1/stores/${report.store.id}`);
      expect(store.body.data.attributes).toMatchObject({ row_count: 4, row_cap: 500, description: 'things', schema: SCHEMA });
    });

    it('reports each bad line (line, key, pointers, message), imports the rest, and lets a later duplicate win', async () => {
      const header = lines((await dump(storeId)).body)[0];
      const body = [
        JSON.stringify(header),
        JSON.stringify({ key: 'ok-1', row: { name: 'one' } }),
        '{not json',
        JSON.stringify({ key: 'bad-row', row: { name: 5, qty: -1 } }),
        JSON.stringify({ key: '', row: { name: 'empty key' } }),
        JSON.stringify({ key: 'ok-1', row: { name: 'one, again' } }),
        '',
        JSON.stringify({ key: 'ok-2', row: { name: 'two' }, updated_at: 'yesterday' }),
      ].join('\n');
      const res = await restore('with-errors', body);
      expect(res.statusCode).toBe(201);
      const report = JSON.parse(res.body);
      expect(report).toMatchObject({ lines: 6, imported: 1, failed: 4, duplicates: { count: 1, lines: [{ line: 6, key: 'ok-1' }] } });
      expect(report.errors).toEqual([
        { line: 3, key: null, code: 'malformed_json', message: expect.stringContaining('the line is not JSON'), pointers: [] },
        { line: 4, key: 'bad-row', code: 'validation_failed', message: 'row.name must be string; row.qty must be >= 0', pointers: ['/row/name', '/row/qty'] },
        { line: 5, key: '', code: 'invalid_key', message: expect.any(String), pointers: ['/key'] },
        { line: 8, key: 'ok-2', code: 'validation_failed', message: 'updated_at must be an RFC 3339 timestamp', pointers: ['/updated_at'] },
      ]);
      const row = await t.request('GET', `/api/v1/stores/${report.store.id}/rows/ok-1`);
      expect(row.body.data.attributes.row).toEqual({ name: 'one, again' });
    });

    it('refuses a taken slug with 409 and a malformed header with 400, creating nothing', async () => {
      const before = (await t.request('GET', '/api/v1/stores?page[count]=true')).body.meta.count;
      const dumped = (await dump(storeId)).body;
      const taken = await restore('inventory', dumped);
      expect(taken.statusCode).toBe(409);
      expect(JSON.parse(taken.body).errors[0].code).toBe('slug_taken');
      for (const header of ['not json', '{"format":"other/v9","name":"x","schema":{"type":"object"}}', '{"format":"service-store/v1","schema":{"type":"object"}}', '']) {
        const res = await restore('fresh-slug', `${header}\n{"key":"a","row":{}}\n`);
        expect(res.statusCode, header).toBe(400);
        expect(JSON.parse(res.body).errors[0]).toMatchObject({ status: '400', code: 'invalid_body' });
      }
      expect((await t.request('GET', '/api/v1/stores?page[count]=true')).body.meta.count).toBe(before);
    });

    it('stops at the row cap, reporting each row past it', async () => {
      const header = { format: 'service-store/v1', name: 'Small', schema: { type: 'object' }, row_cap: 2 };
      const body = [header, { key: 'a', row: {} }, { key: 'b', row: {} }, { key: 'c', row: {} }].map((l) => JSON.stringify(l)).join('\n');
      const report = JSON.parse((await restore('small', body)).body);
      expect(report).toMatchObject({ imported: 2, failed: 1, errors: [{ line: 4, key: 'c', code: 'row_cap_exceeded' }], store: { row_count: 2 } });
    });

    it('needs a build token and the NDJSON media type', async () => {
      const dumped = (await dump(storeId)).body;
      expect((await restore('by-reader', dumped, t.tokens.read)).statusCode).toBe(403);
      const wrongType = await t.app.inject({ method: 'POST', url: '/api/v1/stores/restore?slug=typed', headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': 'text/plain' }, payload: dumped });
      expect(wrongType.statusCode).toBe(415);
      const noSlug = await t.app.inject({ method: 'POST', url: '/api/v1/stores/restore', headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': NDJSON }, payload: dumped });
      expect(noSlug.statusCode).toBe(400);
      expect(JSON.parse(noSlug.body).errors[0]).toMatchObject({ status: '400' });
    });
  });
});
