import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { openSecret } from '../src/lib/secret-box.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const C = '/api/v1/connections';
const KEY = 'sk-live-0123456789abcdefSECRET';

describeEachDialect('connections', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  const create = (attributes: Record<string, unknown>) => t.request('POST', C, { body: { data: { type: 'connection', attributes } } });

  it('creates connections of each provider; the key is sealed at rest and the resource only says has_api_key', async () => {
    const openai = await create({ provider: 'openai', name: 'OpenAI', api_key: KEY });
    expect(openai.status).toBe(201);
    expect(openai.body.data.attributes).toEqual({
      provider: 'openai',
      name: 'OpenAI',
      base_url: null,
      has_api_key: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(openai.raw).not.toContain(KEY);
    const row = await t.deps.db.selectFrom('connections').selectAll().where('id', '=', openai.body.data.id).executeTakeFirstOrThrow();
    expect(row.api_key_sealed).not.toContain(KEY);
    expect(openSecret(t.deps.secretKey, row.api_key_sealed!)).toBe(KEY);

    const local = await create({ provider: 'openai_compatible', name: 'Ollama', base_url: 'http://127.0.0.1:11434/v1/' });
    expect(local.status).toBe(201);
    expect(local.body.data.attributes).toMatchObject({ base_url: 'http://127.0.0.1:11434/v1', has_api_key: false });
    const anthropic = await create({ provider: 'anthropic', name: 'Claude', api_key: KEY, base_url: 'https://api.anthropic.com' });
    expect(anthropic.status).toBe(201);

    const list = await t.request('GET', `${C}?fields[connection]=name,provider,has_api_key`);
    expect(list.body.data.map((d: { attributes: object }) => d.attributes)).toEqual([
      { name: 'OpenAI', provider: 'openai', has_api_key: true },
      { name: 'Ollama', provider: 'openai_compatible', has_api_key: false },
      { name: 'Claude', provider: 'anthropic', has_api_key: true },
    ]);
    expect(list.raw).not.toContain(KEY);
    expect((await t.request('GET', `${C}/${openai.body.data.id}`)).raw).not.toContain(KEY);
    const unknownField = await t.request('GET', `${C}?fields[connection]=api_key`);
    expect(unknownField.status).toBe(400);
  });

  it('refuses invalid connections with 422 and pointers', async () => {
    const res = await create({ provider: 'cohere', name: '', api_key: 42, extra: 1 });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { source: { pointer: string } }) => e.source.pointer).sort()).toEqual(
      ['/data/attributes/api_key', '/data/attributes/extra', '/data/attributes/name', '/data/attributes/provider'].sort(),
    );
    const noBase = await create({ provider: 'openai_compatible', name: 'Local' });
    expect(noBase.status).toBe(422);
    expect(noBase.body.errors[0].source.pointer).toBe('/data/attributes/base_url');
    for (const base_url of [
      'ftp://models.example/v1',
      'not a url',
      'https://user:pass@models.example/v1',
      'http://169.254.169.254/v1',
      'http://10.0.0.5:8000/v1',
    ]) {
      const bad = await create({ provider: 'openai_compatible', name: 'Local', base_url });
      expect(bad.status, base_url).toBe(422);
      expect(bad.body.errors[0].source.pointer).toBe('/data/attributes/base_url');
    }
  });

  it('replaces and removes the key with PATCH, never echoing it, and refuses a provider change', async () => {
    const created = await create({ provider: 'openai', name: 'Rotating', api_key: 'sk-old-key-000000' });
    const id = created.body.data.id;
    const rotated = await t.request('PATCH', `${C}/${id}`, {
      body: { data: { type: 'connection', id, attributes: { api_key: KEY, name: 'Rotated' } } },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.attributes).toMatchObject({ name: 'Rotated', has_api_key: true });
    expect(rotated.raw).not.toContain(KEY);
    const row = await t.deps.db.selectFrom('connections').select('api_key_sealed').where('id', '=', id).executeTakeFirstOrThrow();
    expect(openSecret(t.deps.secretKey, row.api_key_sealed!)).toBe(KEY);
    const removed = await t.request('PATCH', `${C}/${id}`, { body: { data: { type: 'connection', id, attributes: { api_key: null } } } });
    expect(removed.body.data.attributes.has_api_key).toBe(false);
    const provider = await t.request('PATCH', `${C}/${id}`, {
      body: { data: { type: 'connection', id, attributes: { provider: 'anthropic' } } },
    });
    expect(provider.status).toBe(422);
    expect(provider.body.errors[0]).toMatchObject({ code: 'validation_failed', source: { pointer: '/data/attributes/provider' } });
  });

  it('refuses to delete a connection a knowledge base or memory uses (409), then deletes it once unused', async () => {
    const created = await create({ provider: 'openai', name: 'Used', api_key: KEY });
    const id = created.body.data.id;
    const base = await t.request('POST', '/api/v1/knowledge-bases', {
      body: {
        data: { type: 'knowledge-base', attributes: { name: 'Uses it', embedder: { connection_id: id, model: 'text-embedding-3-small' } } },
      },
    });
    expect(base.status).toBe(201);
    expect(base.body.data.attributes.embedder).toEqual({ connection_id: id, model: 'text-embedding-3-small' });
    const refused = await t.request('DELETE', `${C}/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0].code).toBe('invalid_state');
    expect(refused.body.errors[0].detail).toContain('Uses it');
    expect((await t.request('DELETE', `/api/v1/knowledge-bases/${base.body.data.id}`)).status).toBe(204);
    expect((await t.request('DELETE', `${C}/${id}`)).status).toBe(204);
    expect((await t.request('GET', `${C}/${id}`)).status).toBe(404);
  });

  it('an anthropic connection cannot embed (422 on the knowledge base)', async () => {
    const claude = await create({ provider: 'anthropic', name: 'No embeddings', api_key: KEY });
    const base = await t.request('POST', '/api/v1/knowledge-bases', {
      body: { data: { type: 'knowledge-base', attributes: { name: 'x', embedder: { connection_id: claude.body.data.id, model: 'm' } } } },
    });
    expect(base.status).toBe(422);
    expect(base.body.errors[0].source.pointer).toBe('/data/attributes/embedder/connection_id');
  });

  it('never writes the key to the log, even at trace level with request headers and bodies around', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
    const app = await buildApp({
      ...t.deps,
      config: { apiRateLimit: 0, webhookRateLimit: 0, trustProxy: [], baseUrl: 'http://sy.test' },
      logger,
    });
    try {
      const res = await app.inject({
        method: 'POST',
        url: C,
        headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': 'application/vnd.api+json' },
        payload: JSON.stringify({ data: { type: 'connection', attributes: { provider: 'openai', name: 'Logged', api_key: KEY } } }),
      });
      expect(res.statusCode).toBe(201);
      const bad = await app.inject({
        method: 'POST',
        url: C,
        headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': 'application/vnd.api+json' },
        payload: JSON.stringify({ data: { type: 'connection', attributes: { provider: 'nope', name: 'Logged', api_key: KEY } } }),
      });
      expect(bad.statusCode).toBe(422);
      expect(bad.body).not.toContain(KEY);
    } finally {
      await app.close();
    }
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain(KEY);
  });
});
