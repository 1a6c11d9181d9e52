import { expect } from 'vitest';
import type { TestApp, TestResponse } from './test-app.js';

/** Small wrappers over the store routes for the store test files. */
export function storeClient(t: TestApp) {
  const client = {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async create(attributes: Record<string, unknown>, token?: string): Promise<{ id: string; attributes: Record<string, any> }> {
      const res = await t.request('POST', '/api/v1/stores', { body: { data: { type: 'store', attributes } }, ...(token ? { token } : {}) });
      expect(res.status, res.raw).toBe(201);
      return res.body.data;
    },
    rowPath: (storeId: string, key: string) => `/api/v1/stores/${storeId}/rows/${encodeURIComponent(key)}`,
    put: (storeId: string, key: string, row: unknown, extra: Record<string, unknown> = {}): Promise<TestResponse> =>
      t.request('PUT', client.rowPath(storeId, key), { body: { data: { row, ...extra } } }),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async putOk(storeId: string, key: string, row: unknown): Promise<Record<string, any>> {
      const res = await client.put(storeId, key, row);
      expect([200, 201], res.raw).toContain(res.status);
      return res.body;
    },
    remove: (storeId: string, key: string) => t.request('DELETE', client.rowPath(storeId, key)),
    patch: (storeId: string, attributes: Record<string, unknown>) =>
      t.request('PATCH', `/api/v1/stores/${storeId}`, { body: { data: { type: 'store', id: storeId, attributes } } }),
    /** A feed URL (rows or deletions) followed to its end: every entry, and the last links.next. */
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async drain(url: string): Promise<{ entries: any[]; next: string }> {
      const entries = [];
      let next = url;
      for (let pages = 0; pages < 1000; pages++) {
        const res = await t.request('GET', next);
        expect(res.status, res.raw).toBe(200);
        entries.push(...res.body.data);
        expect(res.body.links.next).toEqual(expect.any(String));
        const following = relative(res.body.links.next);
        if (res.body.data.length === 0) return { entries, next: following };
        next = following;
      }
      throw new Error('the feed did not end');
    },
  };
  return client;
}

/** A link of the API's answers (absolute, on the test base URL) as an inject path. */
export function relative(link: string): string {
  return link.replace('http://sy.test', '');
}

export const keysOf = (entries: { id?: string; key?: string; attributes?: { key: string } }[]): string[] =>
  entries.map((e) => String(e.attributes?.key ?? e.key));
