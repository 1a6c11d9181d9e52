import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, JSONAPI, type TestApp } from './support/test-app.js';

describeEachDialect('HTTP platform', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  describe('authentication', () => {
    it('answers 401 unauthorized without a token', async () => {
      const res = await t.request('GET', '/api/v1/me', { token: null });
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toBe(JSONAPI);
      expect(res.body.errors[0]).toMatchObject({ status: '401', code: 'unauthorized', title: 'Unauthorized' });
    });

    it('answers 401 for an unknown, malformed, or non-bearer token with the same body', async () => {
      const unknown = await t.request('GET', '/api/v1/me', { token: `sy_${'A'.repeat(40)}` });
      const malformed = await t.request('GET', '/api/v1/me', { token: 'not-a-token' });
      const basic = await t.request('GET', '/api/v1/me', {
        token: null,
        headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      });
      for (const res of [unknown, malformed, basic]) {
        expect(res.status).toBe(401);
        expect(res.body.errors[0].detail).toBe(unknown.body.errors[0].detail);
      }
    });

    it('answers 401 for an expired token', async () => {
      const created = await t.deps.identity.createToken({ workspaceSlug: 'main', scope: 'build', expiresIn: '1h' });
      expect((await t.request('GET', '/api/v1/me', { token: created.token })).status).toBe(200);
      t.clock.advance(3_600_001);
      expect((await t.request('GET', '/api/v1/me', { token: created.token })).status).toBe(401);
    });

    it('answers 401 for a revoked token on the very next request', async () => {
      const created = await t.deps.identity.createToken({ workspaceSlug: 'main', scope: 'build' });
      expect((await t.request('GET', '/api/v1/me', { token: created.token })).status).toBe(200);
      await t.deps.identity.revokeToken(created.id);
      expect((await t.request('GET', '/api/v1/me', { token: created.token })).status).toBe(401);
    });

    it('answers 403 plan_required for a workspace not on Pro', async () => {
      const res = await t.request('GET', '/api/v1/workflows', { token: t.tokens.free });
      expect(res.status).toBe(403);
      expect(res.body.errors[0].code).toBe('plan_required');
    });

    it('refuses a write with a read token with 403 telling the caller to mint a build-scoped token', async () => {
      const res = await t.request('POST', '/api/v1/workflows', { token: t.tokens.read, body: { data: { name: 'x' } } });
      expect(res.status).toBe(403);
      expect(res.body.errors[0].code).toBe('forbidden');
      expect(res.body.errors[0].detail).toContain('mint a build-scoped token');
    });

    it('checks the token before reading the body: a malformed body with no token is 401', async () => {
      const res = await t.request('POST', '/api/v1/workflows', { token: null, body: '{not json' });
      expect(res.status).toBe(401);
    });

    it('records last use of a token', async () => {
      const created = await t.deps.identity.createToken({ workspaceSlug: 'main', scope: 'read' });
      await t.request('GET', '/api/v1/me', { token: created.token });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const listed = await t.deps.identity.listTokens('main');
      expect(listed.find((row) => row.id === created.id)?.last_used_at).not.toBeNull();
    });
  });

  describe('GET /me', () => {
    it('returns the user, the pinned workspace, the scopes and the expiry', async () => {
      const res = await t.request('GET', '/api/v1/me');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(JSONAPI);
      expect(res.body.data.type).toBe('user');
      expect(res.body.data.attributes.workspace).toEqual({ id: t.workspaces.main, name: 'Main', slug: 'main' });
      expect(res.body.data.attributes.token.scopes).toEqual(['read', 'build']);
      expect(res.body.data.attributes.token.expires_at).toBe('2027-01-30T00:00:00.000000Z');
      const read = await t.request('GET', '/api/v1/me', { token: t.tokens.read });
      expect(read.body.data.attributes.token.scopes).toEqual(['read']);
    });
  });

  describe('media types', () => {
    it('answers 415 to a body sent as application/json', async () => {
      const res = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'x' } }, contentType: 'application/json' });
      expect(res.status).toBe(415);
      expect(res.body.errors[0].code).toBe('unsupported_media_type');
    });

    it('answers 415 to the JSON:API type with a media type parameter other than charset', async () => {
      const res = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'x' } }, contentType: `${JSONAPI}; ext=bulk` });
      expect(res.status).toBe(415);
    });

    it('answers 406 when Accept excludes the JSON:API type', async () => {
      const res = await t.request('GET', '/api/v1/workflows', { headers: { accept: 'text/html' } });
      expect(res.status).toBe(406);
      expect(res.body.errors[0].code).toBe('not_acceptable');
      const params = await t.request('GET', '/api/v1/workflows', { headers: { accept: `${JSONAPI}; profile=x` } });
      expect(params.status).toBe(406);
      const ok = await t.request('GET', '/api/v1/workflows', { headers: { accept: `text/html, ${JSONAPI}` } });
      expect(ok.status).toBe(200);
    });

    it('answers 400 malformed_json for a body that is not JSON', async () => {
      const res = await t.request('POST', '/api/v1/workflows', { body: '{"data": ' });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].code).toBe('malformed_json');
    });

    it('answers 413 for a body over the limit', async () => {
      const res = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'x', description: 'y'.repeat(1_100_000) } } });
      expect(res.status).toBe(413);
      expect(res.body.errors[0].code).toBe('payload_too_large');
    });
  });

  describe('errors', () => {
    it('answers an unknown route with a JSON:API 404', async () => {
      const res = await t.request('GET', '/api/v1/nothing-here');
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe('not_found');
      const outside = await t.request('GET', '/nowhere', { token: null });
      expect(outside.status).toBe(404);
      expect(outside.headers['content-type']).toBe(JSONAPI);
    });

    it('answers an unknown query parameter with 400 naming it', async () => {
      const res = await t.request('GET', '/api/v1/workflows?colour=red');
      expect(res.status).toBe(400);
      expect(res.body.errors[0].source).toEqual({ parameter: 'colour' });
    });

    it('gives every error the request id and echoes it in x-request-id', async () => {
      const res = await t.request('GET', '/api/v1/workflows/0190f2a0-0000-7000-8000-000000000000', {
        headers: { 'x-request-id': 'trace-123' },
      });
      expect(res.status).toBe(404);
      expect(res.headers['x-request-id']).toBe('trace-123');
      expect(res.body.errors[0].id).toBe('trace-123');
    });

    it('never leaks internals in a 500', async () => {
      const failing = {
        ...t.deps.workflows,
        get: async () => Promise.reject(new Error('SELECT secret FROM passwords')),
      } as unknown as typeof t.deps.workflows;
      const app = await buildApp({
        ...t.deps,
        workflows: failing,
        config: { apiRateLimit: 0, trustProxy: [], baseUrl: 'http://sy.test' },
        logger: false,
      });
      const res = await app.inject({
        method: 'GET',
        url: '/api/v1/workflows/0190f2a0-0000-7000-8000-000000000000',
        headers: { authorization: `Bearer ${t.tokens.build}` },
      });
      await app.close();
      expect(res.statusCode).toBe(500);
      expect(res.body).not.toContain('SELECT');
      expect(res.body).not.toContain('passwords');
      expect(JSON.parse(res.body).errors[0].code).toBe('internal_error');
    });
  });

  describe('health', () => {
    it('answers /healthz and /readyz without a token', async () => {
      expect((await t.request('GET', '/healthz', { token: null })).body).toEqual({ status: 'ok' });
      // Readiness also says how vectors are searched: sqlite-vec, or on PostgreSQL pgvector when the
      // extension is installed and the exact scan otherwise (this machine has no pgvector).
      const ready = (await t.request('GET', '/readyz', { token: null })).body;
      expect(ready).toEqual({
        status: 'ready',
        vector_search: dialect === 'sqlite' ? 'sqlite-vec' : expect.stringMatching(/^(pgvector|exact)$/),
      });
      if (dialect === 'postgres') {
        const available = await sql<{ n: number }>`select count(*)::int as n from pg_available_extensions where name = 'vector'`.execute(
          t.deps.db,
        );
        expect(ready.vector_search).toBe(available.rows[0]!.n > 0 ? 'pgvector' : 'exact');
      }
    });
  });
});

describeEachDialect('rate limit', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { apiRateLimit: 3 });
  });
  afterAll(() => t.close());

  it('answers 429 with Retry-After and RateLimit headers past the per-token limit, counting tokens apart', async () => {
    for (let i = 0; i < 3; i += 1) {
      const ok = await t.request('GET', '/api/v1/me');
      expect(ok.status).toBe(200);
      expect(ok.headers['ratelimit-limit']).toBe('3');
      expect(ok.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    const limited = await t.request('GET', '/api/v1/me');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body.errors[0].code).toBe('rate_limited');
    expect(limited.headers).toMatchObject({ 'ratelimit-limit': '3', 'ratelimit-remaining': '0' });
    expect(Number(limited.headers['ratelimit-reset'])).toBe(Number(limited.headers['retry-after']));
    // Every request of the window counts, refused ones too; POST bodies are not read first.
    expect((await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'never made' } } })).status).toBe(429);
    expect((await t.request('GET', '/api/v1/me', { token: t.tokens.read })).status).toBe(200);
  });
});
