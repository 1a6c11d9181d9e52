import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { StoreRowRecord } from '../../../store/store-row-repository.js';
import { listDocumentSchema } from '../../jsonapi/resource-schemas.js';
import { JSONAPI_VERSION, toResourceObject } from '../../jsonapi/serialize.js';
import { feedDocument } from './feed-document.js';
import { storeRowResource } from './store-resource.js';

const selfOf = (key: string) => `http://api.test/api/v1/stores/s/rows/${encodeURIComponent(key)}`;
const ROWS: StoreRowRecord[] = [
  {
    store_id: 's',
    key: 'plain',
    row: JSON.stringify({ status: 'paid', amount: 12.5, nested: { list: [1, null, true, 'x'] } }),
    created_at: '2026-01-01T00:00:00.000000Z',
    updated_at: '2026-01-01T00:00:00.000001Z',
    workflow_id: null,
    execution_id: null,
  },
  {
    store_id: 's',
    key: 'a/b "quoted" é😀\u0001',
    row: JSON.stringify({ 'name "q"': 'line\nbreak \\ tab\t é😀 \u2028', __proto__x: 1, empty: {} }),
    created_at: '2026-01-02T00:00:00.000000Z',
    updated_at: '2026-01-02T00:00:00.000000Z',
    workflow_id: '0b6d2c1e-2f0a-4f1e-9d8a-1c2b3d4e5f60',
    execution_id: '1c6d2c1e-2f0a-4f1e-9d8a-1c2b3d4e5f61',
  },
];

/** What Fastify's serializer wrote from the route's response schema, before feed-document.ts. */
async function serialized(document: unknown): Promise<string> {
  const app = Fastify();
  app.get('/', { schema: { response: { 200: listDocumentSchema(storeRowResource) } } }, async () => document);
  const answer = await app.inject({ method: 'GET', url: '/' });
  await app.close();
  return answer.body;
}

function objectDocument(rows: readonly Partial<StoreRowRecord>[], attributes: string[], meta?: { count: number }) {
  return {
    data: rows.map((row) => toResourceObject(storeRowResource, { ...row, id: row.key }, attributes, selfOf(row.key!))),
    links: { self: 'http://api.test/self?a=1', next: 'http://api.test/next?page%5Bafter%5D=x.y' },
    ...(meta ? { meta } : {}),
    jsonapi: JSONAPI_VERSION,
  };
}

describe('feed document', () => {
  it('writes exactly the text the response schema serializer wrote, row JSON spliced in', async () => {
    const attributes = Object.keys(storeRowResource.attributes);
    const expected = await serialized(objectDocument(ROWS, attributes));
    const text = feedDocument(ROWS, attributes, selfOf, { links: objectDocument([], []).links });
    expect(text).toBe(expected);
  });

  it('keeps the schema order for a sparse fieldset, and adds meta.count when asked', async () => {
    const attributes = ['updated_at', 'row', 'key'];
    const rows = ROWS.map(({ key, row, updated_at }) => ({ key, row, updated_at }));
    const expected = await serialized(objectDocument(rows, attributes, { count: 2 }));
    const text = feedDocument(rows, attributes, selfOf, { links: objectDocument([], []).links, meta: { count: 2 } });
    expect(text).toBe(expected);
    expect(JSON.parse(text).data[1].attributes).toEqual({
      key: ROWS[1]!.key,
      row: JSON.parse(ROWS[1]!.row),
      updated_at: ROWS[1]!.updated_at,
    });
  });

  it('writes an empty page', async () => {
    const attributes = Object.keys(storeRowResource.attributes);
    expect(feedDocument([], attributes, selfOf, { links: objectDocument([], []).links })).toBe(
      await serialized(objectDocument([], attributes)),
    );
  });
});
