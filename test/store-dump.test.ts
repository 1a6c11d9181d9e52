import { parse } from 'csv-parse/sync';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { storeClient } from './support/store-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string' },
    qty: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string' } },
    note: { type: 'string' },
  },
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
    t.app.inject({
      method: 'GET',
      url: `/api/v1/stores/${id}/dump${format ? `?format=${format}` : ''}`,
      headers: { authorization: `Bearer ${token}` },
    });
  const restore = (slug: string, body: string, token = t.tokens.build) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/stores/restore?slug=${slug}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': NDJSON },
      payload: body,
    });
  const lines = (text: string) =>
    text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l));

  describe('dump', () => {
    it('writes NDJSON: the header line, then one {key, row, created_at, updated_at} per line in key order', async () => {
      const res = await dump(storeId);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      expect(res.body.endsWith('\n')).toBe(true);
      const [header, ...entries] = lines(res.body);
      expect(header).toEqual({
        format: 'service-store/v1',
        name: 'Inventory',
        slug: 'inventory',
        description: 'things',
        schema: SCHEMA,
        row_cap: 500,
      });
      expect(entries.map((e) => e.key)).toEqual(Object.keys(rows).sort());
      for (const entry of entries) {
        expect(Object.keys(entry)).toEqual(['key', 'row', 'created_at', 'updated_at']);
        expect(entry.row).toEqual(rows[entry.key]);
      }
    });

    it('writes CSV with a column per declared field plus key and updated_at, RFC 4180 quoting and nested values as JSON', async () => {
      const res = await dump(storeId, 'csv');
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      // RFC 4180: CRLF after each record (header included); a line break inside a value stays as it is.
      expect(res.body.startsWith('key,updated_at,name,qty,tags,note\r\n')).toBe(true);
      expect(res.body.match(/\r\n/g)).toHaveLength(1 + Object.keys(rows).length);
      expect(res.body.endsWith('\r\n')).toBe(true);
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
      expect(entries.map((e) => [e.key, e.row])).toEqual(
        Object.keys(rows)
          .sort()
          .map((k) => [k, rows[k]]),
      );
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

  describe('dump back-pressure', () => {
    const ROWS = 40_000;

    it('reads the store only as fast as the client takes it: a client that stops reading holds the server to what the buffers hold', async () => {
      // About 42 MB of NDJSON, written straight into the table (the API would take minutes).
      const big = (await stores.create({ name: 'Big' })).id;
      const row = JSON.stringify({ filler: 'x'.repeat(1000) });
      const at = t.clock.now();
      for (let i = 0; i < ROWS; i += 500) {
        const values = Array.from({ length: 500 }, (_, j) => ({
          store_id: big,
          key: `k${String(i + j).padStart(6, '0')}`,
          row,
          created_at: at,
          updated_at: at,
          workflow_id: null,
          execution_id: null,
        }));
        await t.deps.db.insertInto('store_rows').values(values).execute();
      }
      const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
        http
          .get(`${base}/api/v1/stores/${big}/dump`, { headers: { authorization: `Bearer ${t.tokens.build}` } }, resolve)
          .on('error', reject);
      });
      expect(response.statusCode).toBe(200);
      const chunks: Buffer[] = [];
      await new Promise<void>((resolve) =>
        response.once('data', (chunk: Buffer) => {
          chunks.push(chunk);
          response.pause();
          resolve();
        }),
      );
      // The client reads nothing more for a while: the server fills the socket's buffers and
      // stops. Then every row goes; what still arrives is what the server had read by then.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await t.deps.db.deleteFrom('store_rows').where('store_id', '=', big).execute();
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      await new Promise((resolve) => response.once('end', resolve).resume());
      const received =
        Buffer.concat(chunks)
          .toString('utf8')
          .split('\n')
          .filter((line) => line !== '').length - 1;
      // Without back-pressure all 40,000 would have been read long before.
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThan(ROWS / 2);
    }, 60_000);
  });

  describe('dump media types', () => {
    const withAccept = (query: string, accept: string, path = `/api/v1/stores/${storeId}/dump${query}`) =>
      t.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${t.tokens.build}`, accept } });

    it("answers when the Accept header admits the format's media type", async () => {
      const cases: [string, string, string][] = [
        ['?format=csv', 'text/csv', 'text/csv; charset=utf-8'],
        ['?format=csv', 'text/*', 'text/csv; charset=utf-8'],
        ['?format=csv', 'application/json;q=0.5, text/csv', 'text/csv; charset=utf-8'],
        ['?format=ndjson', 'application/x-ndjson', 'application/x-ndjson; charset=utf-8'],
        ['', 'application/x-ndjson', 'application/x-ndjson; charset=utf-8'],
        ['?format=json', 'application/json', 'application/json; charset=utf-8'],
        ['?format=json', '*/*', 'application/json; charset=utf-8'],
      ];
      for (const [query, accept, type] of cases) {
        const res = await withAccept(query, accept);
        expect(res.statusCode, `${query} ${accept}`).toBe(200);
        expect(res.headers['content-type']).toBe(type);
      }
    });

    it('answers 406 to an Accept header that admits none, as a JSON:API error', async () => {
      const cases: [string, string][] = [
        ['?format=csv', 'application/json'],
        ['?format=csv', 'application/vnd.api+json'],
        ['?format=csv', 'text/csv;q=0, */*'],
        ['?format=json', 'text/csv'],
        ['', 'application/json'],
        ['?format=ndjson', 'text/html'],
      ];
      for (const [query, accept] of cases) {
        const res = await withAccept(query, accept);
        expect(res.statusCode, `${query} ${accept}`).toBe(406);
        expect(res.headers['content-type']).toBe('application/vnd.api+json');
        expect(JSON.parse(res.body).errors[0]).toMatchObject({ code: 'not_acceptable', source: { header: 'Accept' } });
      }
      // An unknown format is the 400 that says so, whatever the Accept.
      expect((await withAccept('?format=xml', 'text/csv')).statusCode).toBe(400);
    });

    it('leaves the other routes as they were', async () => {
      expect((await withAccept('', 'text/csv', `/api/v1/stores/${storeId}`)).statusCode).toBe(406);
      expect((await withAccept('', 'application/json', `/api/v1/stores/${storeId}`)).statusCode).toBe(406);
      expect((await withAccept('', 'application/vnd.api+json', `/api/v1/stores/${storeId}`)).statusCode).toBe(200);
      expect((await withAccept('', 'application/json', `/api/v1/stores/${storeId}/deletions`)).statusCode).toBe(200);
    });
  });

  describe('restore', () => {
    it('dump -> restore -> dump gives identical rows in a new store, answered as the store resource with the report in meta', async () => {
      const first = (await dump(storeId)).body;
      const res = await restore('inventory-copy', first);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['content-type']).toBe('application/vnd.api+json');
      const answer = JSON.parse(res.body);
      expect(answer.meta).toEqual({ rows_imported: 4, rows_failed: 0, failures: [], duplicates: [] });
      const id = answer.data.id as string;
      expect(id).not.toBe(storeId);
      expect(res.headers.location).toBe(`http://sy.test/api/v1/stores/${id}`);
      const store = await t.request('GET', `/api/v1/stores/${id}`);
      expect(store.body.data.attributes).toMatchObject({
        slug: 'inventory-copy',
        name: 'Inventory',
        row_count: 4,
        row_cap: 500,
        description: 'things',
        schema: SCHEMA,
      });
      const { meta: _meta, ...document } = answer;
      expect(document).toEqual(store.body);
      const [, ...again] = (await dump(id)).body.split('\n');
      const [, ...before] = first.split('\n');
      expect(again).toEqual(before);
    });

    it('reports each bad line (line, key, a pointer and detail per error), imports the rest, and lets a later duplicate win', async () => {
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
      const { data, meta } = JSON.parse(res.body);
      expect(meta).toMatchObject({ rows_imported: 1, rows_failed: 4, duplicates: [{ key: 'ok-1', lines: [2, 6] }] });
      expect(meta.failures).toEqual([
        { line: 3, key: null, errors: [{ pointer: '', detail: expect.stringContaining('the line is not JSON') }] },
        {
          line: 4,
          key: 'bad-row',
          errors: [
            { pointer: '/row/name', detail: 'row.name must be string' },
            { pointer: '/row/qty', detail: 'row.qty must be >= 0' },
          ],
        },
        { line: 5, key: '', errors: [{ pointer: '/key', detail: expect.any(String) }] },
        { line: 8, key: 'ok-2', errors: [{ pointer: '/updated_at', detail: 'updated_at must be an RFC 3339 timestamp' }] },
      ]);
      expect(data.attributes.row_count).toBe(1);
      const row = await t.request('GET', `/api/v1/stores/${data.id}/rows/ok-1`);
      expect(row.body.data.attributes.row).toEqual({ name: 'one, again' });
    });

    it('refuses a line nested 100,000 levels deep: a header with 400, a row line as a bad line (not a 500)', async () => {
      const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
      const header = lines((await dump(storeId)).body)[0] as Record<string, unknown>;
      const deepHeader = JSON.stringify({ ...header, schema: { type: 'object', default: '__DEEP__' } }).replace(
        '"__DEEP__"',
        deep(100_000),
      );
      const refused = await restore('deep-header', `${deepHeader}\n{"key":"a","row":{"name":"a"}}\n`);
      expect(refused.statusCode).toBe(400);
      expect(JSON.parse(refused.body).errors[0]).toMatchObject({
        code: 'invalid_body',
        detail: expect.stringMatching(/deeper than 99 levels/),
      });
      const atLimit = JSON.stringify({ key: 'at-limit', row: { name: 'x', tags: '__DEEP__' } }).replace('"__DEEP__"', deep(97));
      const body = [
        JSON.stringify(header),
        JSON.stringify({ key: 'deep', row: { name: 'x', tags: '__DEEP__' } }).replace('"__DEEP__"', deep(100_000)),
        atLimit,
      ].join('\n');
      const res = await restore('deep-rows', body);
      expect(res.statusCode).toBe(201);
      const { meta } = JSON.parse(res.body);
      // Line 3 nests 98 levels under the line: within the limit, so the store's schema judges it.
      expect(meta.failures).toEqual([
        {
          line: 2,
          key: 'deep',
          errors: [{ pointer: `/row/tags${'/0'.repeat(97)}`, detail: expect.stringMatching(/deeper than 99 levels/) }],
        },
        { line: 3, key: 'at-limit', errors: [{ pointer: '/row/tags/0', detail: 'row.tags[0] must be string' }] },
      ]);
    });

    it('refuses a taken slug with 409 and a malformed header with 400, creating nothing', async () => {
      const before = (await t.request('GET', '/api/v1/stores?page[count]=true')).body.meta.count;
      const dumped = (await dump(storeId)).body;
      const taken = await restore('inventory', dumped);
      expect(taken.statusCode).toBe(409);
      expect(JSON.parse(taken.body).errors[0].code).toBe('slug_taken');
      for (const header of [
        'not json',
        '{"format":"other/v9","name":"x","schema":{"type":"object"}}',
        '{"format":"service-store/v1","schema":{"type":"object"}}',
        '',
      ]) {
        const res = await restore('fresh-slug', `${header}\n{"key":"a","row":{}}\n`);
        expect(res.statusCode, header).toBe(400);
        expect(JSON.parse(res.body).errors[0]).toMatchObject({ status: '400', code: 'invalid_body' });
      }
      expect((await t.request('GET', '/api/v1/stores?page[count]=true')).body.meta.count).toBe(before);
    });

    it('stops at the row cap, reporting each row past it', async () => {
      const header = { format: 'service-store/v1', name: 'Small', schema: { type: 'object' }, row_cap: 2 };
      const body = [header, { key: 'a', row: {} }, { key: 'b', row: {} }, { key: 'c', row: {} }].map((l) => JSON.stringify(l)).join('\n');
      const answer = JSON.parse((await restore('small', body)).body);
      expect(answer.meta).toEqual({
        rows_imported: 2,
        rows_failed: 1,
        failures: [{ line: 4, key: 'c', errors: [{ pointer: '', detail: "the store's row_cap (2) is reached" }] }],
        duplicates: [],
      });
      expect(answer.data.attributes.row_count).toBe(2);
    });

    it('needs a build token and the NDJSON media type', async () => {
      const dumped = (await dump(storeId)).body;
      expect((await restore('by-reader', dumped, t.tokens.read)).statusCode).toBe(403);
      const wrongType = await t.app.inject({
        method: 'POST',
        url: '/api/v1/stores/restore?slug=typed',
        headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': 'text/plain' },
        payload: dumped,
      });
      expect(wrongType.statusCode).toBe(415);
      const noSlug = await t.app.inject({
        method: 'POST',
        url: '/api/v1/stores/restore',
        headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': NDJSON },
        payload: dumped,
      });
      expect(noSlug.statusCode).toBe(400);
      expect(JSON.parse(noSlug.body).errors[0]).toMatchObject({ status: '400' });
    });
  });
});
