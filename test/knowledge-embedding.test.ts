import { afterAll, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { buildDeps } from '../src/deps.js';
import { manualClock } from '../src/lib/clock.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from './support/dialects.js';
import { embeddingsAnswer, startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { createTestApp, JSONAPI, type TestApp } from './support/test-app.js';

const KB = '/api/v1/knowledge-bases';
const KEY = 'sk-embedding-test-key-123456';
const DOC = `# Backups

Backups run every night at two and are kept for thirty days.

## Restores

A restore takes about ten minutes per gigabyte.
`;

describeEachDialect('knowledge embedding through a provider', (dialect) => {
  let t: TestApp;
  let provider: FakeProvider;
  let connectionId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    provider = await startFakeProvider();
    const connection = await t.request('POST', '/api/v1/connections', {
      body: {
        data: {
          type: 'connection',
          attributes: { provider: 'openai_compatible', name: 'Local', base_url: provider.openAiBase, api_key: KEY },
        },
      },
    });
    connectionId = connection.body.data.id;
  });
  beforeEach(() => provider.reset());
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  const createBase = async (name: string, embedder: unknown = { connection_id: connectionId, model: 'nomic-embed-text' }) => {
    const res = await t.request('POST', KB, { body: { data: { type: 'knowledge-base', attributes: { name, embedder } } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id as string;
  };
  const ingest = async (baseId: string, content = DOC, key = 'backups') => {
    const res = await t.request('POST', `${KB}/${baseId}/documents`, {
      body: { data: { type: 'knowledge-document', attributes: { title: 'Backups', content, external_key: key } } },
    });
    expect(res.status).toBeLessThan(300);
    return res.body.data.id as string;
  };
  const documentOf = async (baseId: string, id: string) => (await t.request('GET', `${KB}/${baseId}/documents/${id}`)).body.data.attributes;
  const search = (baseId: string, query: string, mode = 'vector') =>
    t.request('POST', `${KB}/${baseId}/search`, { body: { data: { query, mode } } });
  const drain = () => t.deps.background.drain();

  it('embeds through /v1/embeddings of the connection (model, key) and embeds queries the same way', async () => {
    const base = await createBase('Remote');
    const doc = await ingest(base);
    await drain();
    expect(await documentOf(base, doc)).toMatchObject({ status: 'ready', chunk_count: 2, error: null });
    const requests = provider.received('embeddings');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.body).toMatchObject({ model: 'nomic-embed-text', encoding_format: 'float' });
    expect(requests[0]!.body.input).toHaveLength(2);
    expect(requests[0]!.body.input[0]).toContain('Backups\n');
    expect(requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const res = await search(base, 'how long does a restore take?');
    expect(res.status).toBe(200);
    expect(res.body.results[0].heading_path).toEqual(['Backups', 'Restores']);
    expect(provider.received('embeddings').at(-1)!.body.input).toEqual(['how long does a restore take?']);
    expect((await t.request('GET', `${KB}/${base}?fields[knowledge-base]=index_embedder,index_dimensions`)).body.data.attributes).toEqual({
      index_embedder: { connection_id: connectionId, model: 'nomic-embed-text' },
      index_dimensions: 256,
    });
  });

  it('retries a 429 after its Retry-After, then becomes ready', async () => {
    const base = await createBase('Rate limited');
    provider.script('embeddings', { status: 429, headers: { 'retry-after': '7' }, body: { error: { message: 'slow down' } } });
    const doc = await ingest(base);
    await drain();
    const waiting = await documentOf(base, doc);
    expect(waiting).toMatchObject({ status: 'pending', error: { code: 'provider_429' } });
    const row = await t.deps.db
      .selectFrom('knowledge_documents')
      .select(['attempts', 'next_attempt_at'])
      .where('id', '=', doc)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(1);
    expect(Date.parse(row.next_attempt_at!) - t.clock.nowMs()).toBeGreaterThan(6_900);
    // Not before the delay the provider asked for.
    t.clock.advance(6_000);
    await drain();
    expect(provider.received('embeddings')).toHaveLength(1);
    t.clock.advance(1_100);
    await drain();
    expect(provider.received('embeddings')).toHaveLength(2);
    expect(await documentOf(base, doc)).toMatchObject({ status: 'ready', error: null });
  });

  it('fails after its attempts on repeated 500s, keeping the previous version searchable', async () => {
    const base = await createBase('Server errors');
    const doc = await ingest(base);
    await drain();
    provider.reset();
    provider.script('embeddings', ...Array.from({ length: 5 }, () => ({ status: 500, body: { error: { message: 'boom' } } })));
    await ingest(base, `${DOC}\nA new paragraph about snapshots.\n`);
    for (let i = 0; i < 8; i++) {
      await drain();
      t.clock.advance(61_000);
    }
    expect(provider.received('embeddings')).toHaveLength(5);
    const failed = await documentOf(base, doc);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ code: 'provider_500' });
    expect(failed.error.message).not.toContain(KEY);
    const res = await search(base, 'backups every night', 'keyword');
    expect(res.body.results.map((r: { text: string }) => r.text).join(' ')).not.toContain('snapshots');
    expect(res.body.results.length).toBeGreaterThan(0);
    // Sending the same content again tries again.
    provider.reset();
    await ingest(base, `${DOC}\nA new paragraph about snapshots.\n`);
    await drain();
    expect((await documentOf(base, doc)).status).toBe('ready');
  });

  it('fails at once on a malformed answer or a 4xx', async () => {
    const base = await createBase('Malformed');
    provider.script('embeddings', { raw: '{"data": [ not json' });
    const doc = await ingest(base, 'Some text.', 'malformed');
    await drain();
    expect(await documentOf(base, doc)).toMatchObject({ status: 'failed', error: { code: 'provider_malformed_response' } });
    provider.script('embeddings', { status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}` } } });
    const other = await ingest(base, 'Other text.', 'unauthorized');
    await drain();
    const failed = await documentOf(base, other);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'provider_401' } });
    expect(JSON.stringify(failed)).not.toContain(KEY);
    expect(provider.received('embeddings')).toHaveLength(2);
  });

  it('swaps documents embedded in one pass in one transaction; a document whose swap fails fails alone', async () => {
    const base = await createBase('Batched');
    const first = await ingest(base, 'The lighthouse keeper logs the weather.', 'first');
    const second = await ingest(base, 'The harbour master logs the tides.', 'second');
    const third = await ingest(base, 'The pilot logs the ships.', 'third');
    const transactions = vi.spyOn(t.deps.db, 'transaction');
    await drain();
    expect(transactions).toHaveBeenCalledTimes(1);
    for (const id of [first, second, third]) expect(await documentOf(base, id)).toMatchObject({ status: 'ready', chunk_count: 1 });

    // The provider answers the second document with vectors of another size: its swap throws,
    // the batch is rolled back and tried again document by document.
    await ingest(base, 'The lighthouse keeper logs the wind.', 'first');
    await ingest(base, 'The harbour master logs the currents.', 'second');
    await ingest(base, 'The pilot logs the boats.', 'third');
    // (Answered by input: the order in which one pass embeds its documents is the claim's.)
    const answer = (request: { body: { input: string[] } }) =>
      request.body.input.some((input) => input.includes('harbour'))
        ? {
            body: {
              object: 'list',
              data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8] }],
              model: 'm',
              usage: { prompt_tokens: 1, total_tokens: 1 },
            },
          }
        : { body: embeddingsAnswer(request.body.input) };
    provider.script('embeddings', answer, answer, answer);
    transactions.mockClear();
    await drain();
    transactions.mockRestore();
    expect(await documentOf(base, first)).toMatchObject({ status: 'ready', error: null });
    expect(await documentOf(base, third)).toMatchObject({ status: 'ready', error: null });
    expect(await documentOf(base, second)).toMatchObject({ status: 'failed', error: { code: 'provider_malformed_response' } });
    const texts = (await search(base, 'logs', 'keyword')).body.results.map((r: { text: string }) => r.text).sort();
    // The failed document's previous version stays searchable.
    expect(texts).toEqual(['The harbour master logs the tides.', 'The lighthouse keeper logs the wind.', 'The pilot logs the boats.']);
  });

  it('a search whose query embedding fails answers 503 with Retry-After (retryable) or 502', async () => {
    const base = await createBase('Search errors');
    await ingest(base);
    await drain();
    provider.script(
      'embeddings',
      { status: 503, headers: { 'retry-after': '3' } },
      { status: 400, body: { error: { message: 'bad model' } } },
    );
    const unavailable = await search(base, 'backups');
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers['retry-after']).toBe('3');
    expect(unavailable.body.errors[0].code).toBe('provider_unavailable');
    const rejected = await search(base, 'backups');
    expect(rejected.status).toBe(502);
    expect(rejected.body.errors[0].code).toBe('provider_error');
    // Keyword search needs no embedding.
    expect((await search(base, 'backups', 'keyword')).status).toBe(200);
  });

  it('changing the embedder re-embeds every chunk in the background; search uses the old vectors until the swap', async () => {
    const base = await createBase('Switching', { kind: 'builtin' });
    await ingest(base);
    await drain();
    expect(provider.received('embeddings')).toHaveLength(0);
    const patched = await t.request('PATCH', `${KB}/${base}`, {
      body: {
        data: { type: 'knowledge-base', id: base, attributes: { embedder: { connection_id: connectionId, model: 'bigger-model' } } },
      },
    });
    expect(patched.body.data.attributes).toMatchObject({
      embedder_status: 'reembedding',
      embedder: { connection_id: connectionId, model: 'bigger-model' },
    });
    // Before the swap: queries are embedded with the built-in embedder (no provider call).
    const before = await search(base, 'restore minutes per gigabyte');
    expect(before.body.results[0].heading_path).toEqual(['Backups', 'Restores']);
    expect(provider.received('embeddings')).toHaveLength(0);
    await drain();
    expect(provider.received('embeddings')).toHaveLength(1);
    expect(provider.received('embeddings')[0]!.body.model).toBe('bigger-model');
    const after = await t.request('GET', `${KB}/${base}?fields[knowledge-base]=embedder_status,index_embedder,chunk_count`);
    expect(after.body.data.attributes).toEqual({
      embedder_status: 'ready',
      index_embedder: { connection_id: connectionId, model: 'bigger-model' },
      chunk_count: 2,
    });
    const res = await search(base, 'restore minutes per gigabyte');
    expect(res.body.results[0].heading_path).toEqual(['Backups', 'Restores']);
    expect(provider.received('embeddings').at(-1)!.body.input).toEqual(['restore minutes per gigabyte']);
  });
});

describeEachDialect('knowledge embedding across a restart', (dialect) => {
  let database: TestDatabase;
  let provider: FakeProvider;
  beforeAll(async () => {
    database = await createTestDatabase(dialect, { sqliteFile: true });
    provider = await startFakeProvider();
  });
  afterAll(async () => {
    await provider.close();
    await database.close();
  });

  const open = async () => {
    const clock = manualClock('2026-11-01T00:00:00.000000Z');
    const deps = await buildDeps(
      {
        databaseUrl: null,
        dataDir: '/nonexistent',
        secretKey: 'test-secret-key-test-secret-key-0123456789',
        baseUrl: 'http://sy.test',
        httpAllow: ['127.0.0.1'],
      },
      { clock, database: { ...database, close: async () => {} }, timers: false },
    );
    const app = await buildApp({
      ...deps,
      config: { apiRateLimit: 0, webhookRateLimit: 0, trustProxy: [], baseUrl: 'http://sy.test' },
      logger: false,
    });
    return { deps, app, close: async () => (await app.close(), await deps.close()) };
  };

  it('a document pending when the process stops (even mid-request to the provider) becomes ready in the next one', async () => {
    const first = await open();
    const workspace = await first.deps.identity.createWorkspace({ name: 'Restart', slug: 'restart', plan: 'pro' });
    const { token } = await first.deps.identity.createToken({ workspaceSlug: 'restart', scope: 'build' });
    const call = async (app: typeof first.app, method: 'GET' | 'POST', url: string, body?: unknown) => {
      const res = await app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': JSONAPI } : {}) },
        ...(body ? { payload: JSON.stringify(body) } : {}),
      });
      return { status: res.statusCode, body: JSON.parse(res.body) };
    };
    expect(workspace.id).toBeTruthy();
    const connection = await call(first.app, 'POST', '/api/v1/connections', {
      data: { type: 'connection', attributes: { provider: 'openai_compatible', name: 'Local', base_url: provider.openAiBase } },
    });
    const base = await call(first.app, 'POST', KB, {
      data: { type: 'knowledge-base', attributes: { name: 'Durable', embedder: { connection_id: connection.body.data.id, model: 'm' } } },
    });
    // The provider never answers the first request: the process stops while it is in flight.
    provider.script('embeddings', { hang: true });
    const reached = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (provider.received('embeddings').length > 0) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    first.deps.background.start();
    const doc = await call(first.app, 'POST', `${KB}/${base.body.data.id}/documents`, {
      data: { type: 'knowledge-document', attributes: { title: 'Backups', content: DOC } },
    });
    expect(doc.status).toBe(201);
    await reached;
    await first.close();
    const stopped = await database.db
      .selectFrom('knowledge_documents')
      .select(['status', 'lease_owner', 'attempts'])
      .where('id', '=', doc.body.data.id)
      .executeTakeFirstOrThrow();
    expect(stopped).toEqual({ status: 'pending', lease_owner: null, attempts: 0 });

    const second = await open();
    await second.deps.background.drain();
    const ready = await call(second.app, 'GET', `${KB}/${base.body.data.id}/documents/${doc.body.data.id}`);
    expect(ready.body.data.attributes).toMatchObject({ status: 'ready', chunk_count: 2 });
    expect(provider.received('embeddings')).toHaveLength(2);
    await second.close();
  });
});
