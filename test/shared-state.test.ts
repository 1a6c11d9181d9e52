import { sql, type RawBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from './support/dialects.js';
import { createPeerApp, createTestApp, type TestApp } from './support/test-app.js';
import { deliver, executionCount, webhookWorkflow } from './support/webhook-helpers.js';

type Peer = Awaited<ReturnType<typeof createPeerApp>>;

/**
 * Two apps on one PostgreSQL database, each over its own deps and connection pool, as two API
 * processes are. test/shared-state-processes.test.ts does the same with real `serve` processes.
 */
/** Runs a write with triggers off for its session, so the database does not announce it. */
async function unannounced(t: TestApp, statement: RawBuilder<unknown>): Promise<void> {
  await t.deps.db.connection().execute(async (db) => {
    await sql`set session_replication_role = replica`.execute(db);
    try {
      await statement.execute(db);
    } finally {
      await sql`set session_replication_role = origin`.execute(db);
    }
  });
}

function twoProcesses(options: Parameters<typeof createTestApp>[1]) {
  const pair = {} as { a: TestApp; b: Peer; asB: TestApp };
  beforeAll(async () => {
    pair.a = await createTestApp('postgres', options);
    pair.b = await createPeerApp(pair.a, options);
    // `a` with the other app's request and inject, for the webhook helpers.
    pair.asB = { ...pair.a, app: pair.b.app, request: pair.b.request };
  });
  afterAll(async () => {
    await pair.b.close();
    await pair.a.close();
  });
  return pair;
}

describe.skipIf(!TEST_DATABASE_URL)('rate limits of two API processes [postgres]', () => {
  const pair = twoProcesses({ apiRateLimit: 4, webhookRateLimit: 3, trustProxy: ['127.0.0.1'] });

  it('counts one token’s requests against one limit, whichever process answers', async () => {
    const { a, b } = pair;
    const token = (await a.deps.identity.createToken({ workspaceSlug: 'main', scope: 'read' })).token;
    const remaining: string[] = [];
    for (const app of [a, b, a, b]) {
      const answer = await app.request('GET', '/api/v1/me', { token });
      expect(answer.status).toBe(200);
      remaining.push(String(answer.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    const limited = await a.request('GET', '/api/v1/me', { token });
    expect(limited.status).toBe(429);
    expect(limited.body.errors[0].code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(50);
    expect((await b.request('GET', '/api/v1/me', { token })).status).toBe(429);
  });

  it('counts one sender address’s deliveries against one limit, whichever process answers', async () => {
    const { a, asB } = pair;
    const hook = await webhookWorkflow(a, 'Shared limit', { verification: { method: 'none' } });
    const from = (t: TestApp, address: string) => deliver(t, hook.path, { body: '{}', headers: { 'x-forwarded-for': address } });
    expect((await from(a, '203.0.113.50')).status).toBe(202);
    expect((await from(asB, '203.0.113.50')).status).toBe(202);
    expect((await from(a, '203.0.113.50')).status).toBe(202);
    const limited = await from(asB, '203.0.113.50');
    expect(limited.status).toBe(429);
    expect(limited.json().errors[0].code).toBe('rate_limited');
    // API and webhook counts are kept apart, as are addresses.
    expect((await from(asB, '203.0.113.51')).status).toBe(202);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('caches of two API processes [postgres]', () => {
  const pair = twoProcesses({});

  it('serves token look-ups from its cache, and a write through the other process ends it on the next request', async () => {
    const { a, b } = pair;
    const created = await a.deps.identity.createToken({ workspaceSlug: 'main', scope: 'read' });
    for (let i = 0; i < 2; i += 1) expect((await b.request('GET', '/api/v1/workflows', { token: created.token })).status).toBe(200);
    // A write the database does not announce (triggers off for this session) stays unseen: the
    // look-up really is cached.
    await unannounced(a, sql`update workspaces set plan = 'free' where slug = 'main'`);
    expect((await b.request('GET', '/api/v1/workflows', { token: created.token })).status).toBe(200);
    // Revoked through the other process: refused on the next request (and the unannounced
    // downgrade shows with it, the cache entry being gone).
    await a.deps.identity.revokeToken(created.id);
    expect((await b.request('GET', '/api/v1/workflows', { token: created.token })).status).toBe(401);
    expect((await b.request('GET', '/api/v1/workflows', { token: a.tokens.build })).status).toBe(403);
    await sql`update workspaces set plan = 'pro' where slug = 'main'`.execute(a.deps.db);
    expect((await b.request('GET', '/api/v1/workflows', { token: a.tokens.build })).status).toBe(200);
  });

  it('serves list answers from its cache, and a rename through the other process shows on the next request', async () => {
    const { a, b } = pair;
    const id = (await a.request('POST', '/api/v1/workflows', { body: { data: { name: 'Listed' } } })).body.data.id as string;
    const names = async () =>
      (await b.request('GET', '/api/v1/workflows?sort=name&fields[workflow]=name')).body.data.map(
        (w: { attributes: { name: string } }) => w.attributes.name,
      ) as string[];
    expect(await names()).toContain('Listed');
    await unannounced(a, sql`update workflows set name = 'Unannounced' where id = ${id}`);
    expect(await names()).toContain('Listed');
    const renamed = await a.request('PATCH', `/api/v1/workflows/${id}`, {
      body: { data: { type: 'workflow', id, attributes: { name: 'Renamed' } } },
    });
    expect(renamed.status).toBe(200);
    expect(await names()).toContain('Renamed');
  });

  it('applies a bearer rotation, a capture and an idempotency key taken by the other process to the next delivery', async () => {
    const { a, b, asB } = pair;
    const hook = await webhookWorkflow(a, 'Shared hook', {});
    const bearer = (token: string | undefined, headers: Record<string, string> = {}) =>
      deliver(asB, hook.path, { body: '{"n":1}', headers: { authorization: `Bearer ${token}`, ...headers } });
    expect((await bearer(hook.token)).status).toBe(202);
    // The endpoint really is cached: served again without a read, while nothing is announced.
    const cached = await b.deps.webhookEndpoints.find(hook.webhookId);
    expect(cached).not.toBeNull();
    expect(await b.deps.webhookEndpoints.find(hook.webhookId)).toBe(cached);
    // A write the database does not announce is not heard, yet a delivery that would run is
    // decided on the rows as they are: its commit checks them (migration 0021), finds them
    // changed, and the delivery is decided again on the endpoint read afresh.
    await unannounced(a, sql`update webhooks set token_hash = 'void' where id = ${hook.webhookId}`);
    const executions = await executionCount(asB, hook.workflowId);
    expect((await bearer(hook.token)).status).toBe(401);
    expect(await executionCount(asB, hook.workflowId)).toBe(executions);
    const rotated = await a.request('POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/rotate`);
    expect(rotated.status).toBe(200);
    expect((await bearer(hook.token)).status).toBe(401);

    const capture = await a.request('POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/capture`);
    expect(capture.status).toBe(200);
    const captured = await bearer(rotated.body.token);
    expect(captured.status).toBe(202);
    expect(captured.json()).toEqual({ ok: true, captured: true });
    expect((await a.request('GET', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/capture`)).body.payload.body).toEqual({ n: 1 });

    const first = await deliver(a, hook.path, {
      body: '{}',
      headers: { authorization: `Bearer ${rotated.body.token}`, 'idempotency-key': 'shared-key' },
    });
    expect(first.status).toBe(202);
    const again = await bearer(rotated.body.token, { 'idempotency-key': 'shared-key' });
    expect(again.status).toBe(202);
    expect(again.json().execution_id).toBe(first.json().execution_id);
  });
});
