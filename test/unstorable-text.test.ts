import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, workflowWith } from './support/engine-helpers.js';
import { openAiCompletion, startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { createTestApp, JSONAPI, type TestApp } from './support/test-app.js';

/**
 * Strings PostgreSQL cannot store (NUL, unpaired surrogates) are refused with 422 and a pointer
 * on both dialects, before anything is written. Until this was checked where JSON:API bodies are
 * parsed, a NUL in a name made PostgreSQL fail the insert (500) on most create routes.
 */
describeEachDialect('text the database cannot store', (dialect) => {
  let t: TestApp;
  let provider: FakeProvider;
  let baseId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    provider = await startFakeProvider();
    baseId = (
      await t.request('POST', '/api/v1/knowledge-bases', { body: { data: { type: 'knowledge-base', attributes: { name: 'Docs' } } } })
    ).body.data.id;
  });
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  const post = (url: string, raw: string) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': JSONAPI, accept: JSONAPI },
      payload: raw,
    });
  const count = async (url: string) => (await t.request('GET', `${url}?page[count]=true&page[limit]=1`)).body.meta.count as number;

  it.each([
    ['workflows', '/api/v1/workflows', (name: string) => `{"data":{"type":"workflow","attributes":{"name":${name}}}}`],
    ['knowledge bases', '/api/v1/knowledge-bases', (name: string) => `{"data":{"type":"knowledge-base","attributes":{"name":${name}}}}`],
    ['stores', '/api/v1/stores', (name: string) => `{"data":{"type":"store","attributes":{"name":${name}}}}`],
    ['memories', '/api/v1/memories', (name: string) => `{"data":{"type":"memory","attributes":{"name":${name}}}}`],
    [
      'connections',
      '/api/v1/connections',
      (name: string) => `{"data":{"type":"connection","attributes":{"provider":"openai","api_key":"sk-test-0123456789","name":${name}}}}`,
    ],
  ])('refuses a NUL or an unpaired surrogate in a %s name with 422 and a pointer, and writes nothing', async (_what, url, body) => {
    const before = await count(url);
    for (const name of ['"a\\u0000b"', '"\\ud800"', '"x\\udc00"']) {
      const res = await post(url, body(name));
      expect(res.statusCode, res.body).toBe(422);
      expect(JSON.parse(res.body).errors).toEqual([
        expect.objectContaining({ code: 'validation_failed', source: { pointer: '/data/attributes/name' } }),
      ]);
    }
    expect(await count(url)).toBe(before);
    // An emoji written as an escaped surrogate pair, and a backslash followed by "u0000", are fine.
    const emoji = await post(url, body('"fine \\ud83d\\ude00 \\\\u0000"'));
    expect(emoji.statusCode, emoji.body).toBe(201);
    expect(JSON.parse(emoji.body).data.attributes.name).toBe('fine \u{1F600} \\u0000');
  });

  it("points at a member name that holds NUL, deep in a document's metadata", async () => {
    const res = await post(
      `/api/v1/knowledge-bases/${baseId}/documents`,
      '{"data":{"type":"knowledge-document","attributes":{"title":"T","content":"text","metadata":{"tags":{"a\\u0000":1}}}}}',
    );
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body).errors[0]).toMatchObject({
      code: 'validation_failed',
      source: { pointer: '/data/attributes/metadata/tags/a\u0000' },
    });
  });

  it('refuses a NUL in a raw text document, or in its title from the query', async () => {
    const raw = (url: string, payload: string) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': 'text/plain', accept: JSONAPI },
        payload,
      });
    const before = await count(`/api/v1/knowledge-bases/${baseId}/documents`);
    const content = await raw(`/api/v1/knowledge-bases/${baseId}/documents?title=Raw`, 'hello \u0000 world');
    expect(content.statusCode, content.body).toBe(422);
    expect(JSON.parse(content.body).errors[0]).toMatchObject({
      code: 'validation_failed',
      detail: 'content contains the NUL character, which cannot be stored',
    });
    const title = await raw(`/api/v1/knowledge-bases/${baseId}/documents?title=a%00b`, 'hello');
    expect(title.statusCode, title.body).toBe(422);
    expect(JSON.parse(title.body).errors[0]).toMatchObject({
      code: 'validation_failed',
      detail: 'title contains the NUL character, which cannot be stored',
    });
    expect(await count(`/api/v1/knowledge-bases/${baseId}/documents`)).toBe(before);
  });

  it("lets a run's input carry NUL (kept as JSON text, as a webhook payload is)", async () => {
    const workflow = await workflowWith(t, 'Echo', {
      nodes: [node('hook', 'webhook'), node('echo', 'code', { code: 'return trigger.body;' })],
      edges: [edge('hook', 'echo')],
    });
    const row = await executionRow(t, await runToRest(t, workflow, { draft: true, input: { text: 'c\u0000d' } }));
    expect(row.status, row.error ?? '').toBe('completed');
    expect(JSON.parse(row.output!)).toEqual({ text: 'c\u0000d' });
  });

  it("keeps an agent's memory storable: a NUL in the user's text or the model's answer is dropped, and the run completes", async () => {
    const connection = (
      await t.request('POST', '/api/v1/connections', {
        body: {
          data: {
            type: 'connection',
            attributes: { provider: 'openai_compatible', name: 'Local', base_url: provider.openAiBase, api_key: 'sk-nul-test-key-0000' },
          },
        },
      })
    ).body.data.id;
    const memory = (await t.request('POST', '/api/v1/memories', { body: { data: { type: 'memory', attributes: { name: 'Chat' } } } })).body
      .data.id as string;
    const workflow = await workflowWith(t, 'Agent', {
      nodes: [
        node('hook', 'webhook'),
        node('agent', 'agent', {
          connection_id: connection,
          model: 'm',
          prompt: '{{ trigger.body.text }}',
          memory_id: memory,
          session_key: 's',
        }),
      ],
      edges: [edge('hook', 'agent')],
    });
    provider.script('chat', {
      body: openAiCompletion({ text: 'reply x\u0000y \ud800', usage: { prompt_tokens: 1, completion_tokens: 1 } }),
    });
    const row = await executionRow(t, await runToRest(t, workflow, { draft: true, input: { text: 'user a\u0000b' } }));
    expect(row.status, row.error ?? '').toBe('completed');
    const messages = (await t.request('GET', `/api/v1/memories/${memory}/sessions/s/messages`)).body.data as {
      attributes: { role: string; content: string };
    }[];
    expect(messages.map((m) => [m.attributes.role, m.attributes.content])).toEqual([
      ['user', 'user ab'],
      ['assistant', 'reply xy \ufffd'],
    ]);
  });

  it('answers a webhook node id holding NUL like an unknown node (404), on both dialects', async () => {
    const workflow = await workflowWith(t, 'Hooked', { nodes: [node('hook', 'webhook')], edges: [] });
    for (const [method, url] of [
      ['GET', `/api/v1/workflows/${workflow}/webhooks/%00/capture`],
      ['POST', `/api/v1/workflows/${workflow}/webhooks/a%00b/capture`],
      ['POST', `/api/v1/workflows/${workflow}/webhooks/%00/rotate`],
    ] as const) {
      const res = await t.request(method, url);
      expect(res.status, `${method} ${url}: ${res.raw}`).toBe(404);
      expect(res.body.errors[0].code).toBe('not_found');
    }
  });

  it('answers a memory session key holding NUL like an unknown session (404), on both dialects', async () => {
    const memory = (await t.request('POST', '/api/v1/memories', { body: { data: { type: 'memory', attributes: { name: 'Keys' } } } })).body
      .data.id as string;
    for (const [method, url] of [
      ['GET', `/api/v1/memories/${memory}/sessions/%00/messages`],
      ['DELETE', `/api/v1/memories/${memory}/sessions/a%00b/messages`],
    ] as const) {
      const res = await t.request(method, url);
      expect(res.status, `${method} ${url}: ${res.raw}`).toBe(404);
    }
    const appended = await t.request('POST', `/api/v1/memories/${memory}/sessions/a%00b/messages`, {
      body: { data: { role: 'user', content: 'hi' } },
    });
    expect(appended.status, appended.raw).toBe(400);
    expect(appended.body.errors[0].source).toEqual({ parameter: 'key' });
  });
});
