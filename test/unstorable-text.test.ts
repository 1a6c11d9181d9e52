import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, JSONAPI, type TestApp } from './support/test-app.js';

/**
 * Strings PostgreSQL cannot store (NUL, unpaired surrogates) are refused with 422 and a pointer
 * on both dialects, before anything is written. Until this was checked where JSON:API bodies are
 * parsed, a NUL in a name made PostgreSQL fail the insert (500) on most create routes.
 */
describeEachDialect('text the database cannot store', (dialect) => {
  let t: TestApp;
  let baseId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    baseId = (await t.request('POST', '/api/v1/knowledge-bases', { body: { data: { type: 'knowledge-base', attributes: { name: 'Docs' } } } })).body.data.id;
  });
  afterAll(() => t.close());

  const post = (url: string, raw: string) => t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': JSONAPI, accept: JSONAPI }, payload: raw });
  const count = async (url: string) => (await t.request('GET', `${url}?page[count]=true&page[limit]=1`)).body.meta.count as number;

  it.each([
    ['workflows', '/api/v1/workflows', (name: string) => `{"data":{"type":"workflow","attributes":{"name":${name}}}}`],
    ['knowledge bases', '/api/v1/knowledge-bases', (name: string) => `{"data":{"type":"knowledge-base","attributes":{"name":${name}}}}`],
    ['stores', '/api/v1/stores', (name: string) => `{"data":{"type":"store","attributes":{"name":${name}}}}`],
    ['memories', '/api/v1/memories', (name: string) => `{"data":{"type":"memory","attributes":{"name":${name}}}}`],
    ['connections', '/api/v1/connections', (name: string) => `{"data":{"type":"connection","attributes":{"provider":"openai","api_key":"sk-test-0123456789","name":${name}}}}`],
  ])('refuses a NUL or an unpaired surrogate in a %s name with 422 and a pointer, and writes nothing', async (_what, url, body) => {
    const before = await count(url);
    for (const name of ['"a\\u0000b"', '"\\ud800"', '"x\\udc00"']) {
      const res = await post(url, body(name));
      expect(res.statusCode, res.body).toBe(422);
      expect(JSON.parse(res.body).errors).toEqual([expect.objectContaining({ code: 'validation_failed', source: { pointer: '/data/attributes/name' } })]);
    }
    expect(await count(url)).toBe(before);
    // An emoji written as an escaped surrogate pair, and a backslash followed by "u0000", are fine.
    const emoji = await post(url, body('"fine \\ud83d\\ude00 \\\\u0000"'));
    expect(emoji.statusCode, emoji.body).toBe(201);
    expect(JSON.parse(emoji.body).data.attributes.name).toBe('fine \u{1F600} \\u0000');
  });

  it('points at a member name that holds NUL, deep in a document\'s metadata', async () => {
    const res = await post(`/api/v1/knowledge-bases/${baseId}/documents`, '{"data":{"type":"knowledge-document","attributes":{"title":"T","content":"text","metadata":{"tags":{"a\\u0000":1}}}}}');
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body).errors[0]).toMatchObject({ code: 'validation_failed', source: { pointer: '/data/attributes/metadata/tags/a\u0000' } });
  });

  it('refuses a NUL in a raw text document, or in its title from the query', async () => {
    const raw = (url: string, payload: string) => t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': 'text/plain', accept: JSONAPI }, payload });
    const before = await count(`/api/v1/knowledge-bases/${baseId}/documents`);
    const content = await raw(`/api/v1/knowledge-bases/${baseId}/documents?title=Raw`, 'hello \u0000 world');
    expect(content.statusCode, content.body).toBe(422);
    expect(JSON.parse(content.body).errors[0]).toMatchObject({ code: 'validation_failed', detail: 'content contains the NUL character, which cannot be stored' });
    const title = await raw(`/api/v1/knowledge-bases/${baseId}/documents?title=a%00b`, 'hello');
    expect(title.statusCode, title.body).toBe(422);
    expect(JSON.parse(title.body).errors[0]).toMatchObject({ code: 'validation_failed', detail: 'title contains the NUL character, which cannot be stored' });
    expect(await count(`/api/v1/knowledge-bases/${baseId}/documents`)).toBe(before);
  });
});
