import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type RawBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../src/services/identity/identity-service.js';
import { systemClock } from '../src/lib/clock.js';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from './support/dialects.js';
import { runCli, startServe, type ServeProcess } from './support/serve-process.js';

const JSONAPI = 'application/vnd.api+json';
const API_LIMIT = 30;

/**
 * Two real `switchyard serve` processes on one PostgreSQL database, caches on: a write taken by
 * one process (or the CLI) shows on the very next request to the other, and rate limits are
 * counted once for both.
 */
describe.skipIf(!TEST_DATABASE_URL)('two serve processes on one PostgreSQL', () => {
  let database: TestDatabase;
  let identity: IdentityService;
  let dataDir: string;
  let env: Record<string, string>;
  let a: ServeProcess;
  let b: ServeProcess;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    identity = new IdentityService(database.db, systemClock);
    await identity.createWorkspace({ name: 'Main', slug: 'main', plan: 'pro', ownerEmail: 'main@example.test' });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-shared-'));
    env = {
      DATABASE_URL: database.url!,
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_SECRET_KEY: 'shared-state-test-key-shared-state-test-key',
      SWITCHYARD_API_RATE_LIMIT: String(API_LIMIT),
      SWITCHYARD_WEBHOOK_RATE_LIMIT: '1000',
      SWITCHYARD_LOG_LEVEL: 'warn',
      SWITCHYARD_ROLE: 'all',
    };
    [a, b] = await Promise.all([startServe(env), startServe(env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A write with triggers off for its session: the database does not announce it. */
  async function unannounced(statement: RawBuilder<unknown>): Promise<void> {
    await database.db.connection().execute(async (db) => {
      await sql`set session_replication_role = replica`.execute(db);
      try {
        await statement.execute(db);
      } finally {
        await sql`set session_replication_role = origin`.execute(db);
      }
    });
  }

  /** A fresh token each test: every test stays under the per-token limit. */
  const token = async (scope = 'build') => identity.createToken({ workspaceSlug: 'main', scope });

  async function call(server: ServeProcess, method: string, url: string, bearer: string, body?: unknown) {
    const answer = await fetch(`${server.address}${url}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': JSONAPI }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await answer.text();
    return {
      status: answer.status,
      headers: answer.headers,
      body: text && answer.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
    };
  }

  async function webhook(
    server: ServeProcess,
    bearer: string,
  ): Promise<{ workflowId: string; url: (s: ServeProcess) => string; token: string }> {
    const workflowId = (await call(server, 'POST', '/api/v1/workflows', bearer, { data: { name: 'Hook' } })).body.data.id as string;
    const graph = { nodes: [{ id: 'hook', type: 'webhook', config: {}, position: { x: 0, y: 0 } }], edges: [] };
    const put = await call(server, 'PUT', `/api/v1/workflows/${workflowId}/graph`, bearer, { data: { graph, layout: false } });
    expect(put.status).toBe(200);
    expect((await call(server, 'POST', `/api/v1/workflows/${workflowId}/activate`, bearer)).status).toBe(200);
    const webhookId = put.body.graph.nodes[0].config.webhook_id as string;
    return { workflowId, url: (s) => `${s.address}/webhooks/${webhookId}`, token: put.body.webhook_tokens.hook as string };
  }

  const deliver = (url: string, bearer: string, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', ...headers },
      body: '{"n":1}',
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

  it('refuses a token revoked with the CLI on the next request to either process', async () => {
    const created = await token();
    for (const server of [a, b, a, b]) expect((await call(server, 'GET', '/api/v1/me', created.token)).status).toBe(200);
    // Both look-ups really are cached: a revocation the database does not announce stays unseen.
    await unannounced(sql`update api_tokens set revoked_at = '2026-01-01T00:00:00.000000Z' where id = ${created.id}`);
    for (const server of [a, b]) expect((await call(server, 'GET', '/api/v1/me', created.token)).status).toBe(200);
    await unannounced(sql`update api_tokens set revoked_at = null where id = ${created.id}`);
    const revoked = await runCli(['token', 'revoke', created.id], {
      DATABASE_URL: env.DATABASE_URL,
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_SECRET_KEY: env.SWITCHYARD_SECRET_KEY,
    });
    expect(revoked.code, revoked.output).toBe(0);
    expect((await call(b, 'GET', '/api/v1/me', created.token)).status).toBe(401);
    expect((await call(a, 'GET', '/api/v1/me', created.token)).status).toBe(401);
  }, 30_000);

  it('shows a workflow renamed through one process in the other’s list on the next request', async () => {
    const bearer = (await token()).token;
    const id = (await call(a, 'POST', '/api/v1/workflows', bearer, { data: { name: 'Before' } })).body.data.id as string;
    const names = async () =>
      (await call(b, 'GET', '/api/v1/workflows?fields[workflow]=name', bearer)).body.data.map(
        (w: { attributes: { name: string } }) => w.attributes.name,
      ) as string[];
    expect(await names()).toContain('Before');
    // B's list really is cached: a write the database does not announce stays unseen by it.
    await unannounced(sql`update workflows set name = 'Unannounced' where id = ${id}`);
    expect(await names()).toContain('Before');
    expect(
      (await call(a, 'PATCH', `/api/v1/workflows/${id}`, bearer, { data: { type: 'workflow', id, attributes: { name: 'After' } } })).status,
    ).toBe(200);
    const after = await names();
    expect(after).toContain('After');
    expect(after).not.toContain('Before');
  });

  it('refuses a webhook bearer rotated through one process on the next delivery to the other', async () => {
    const bearer = (await token()).token;
    const hook = await webhook(a, bearer);
    expect((await deliver(hook.url(b), hook.token)).status).toBe(202);
    // Even a write the database does not announce applies to a delivery that would run: its
    // commit checks the endpoint's rows (migration 0021) and it is decided again on them.
    await unannounced(sql`update webhooks set token_hash = 'void' where workflow_id = ${hook.workflowId}`);
    expect((await deliver(hook.url(b), hook.token)).status).toBe(401);
    const rotated = await call(a, 'POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/rotate`, bearer);
    expect(rotated.status).toBe(200);
    expect((await deliver(hook.url(b), hook.token)).status).toBe(401);
    expect((await deliver(hook.url(b), rotated.body.token)).status).toBe(202);
  });

  it('honours a sample capture started through one process on the next delivery to the other', async () => {
    const bearer = (await token()).token;
    const hook = await webhook(a, bearer);
    expect((await deliver(hook.url(b), hook.token)).body).toMatchObject({ ok: true, execution_id: expect.any(String) });
    expect((await call(a, 'POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/capture`, bearer)).status).toBe(200);
    expect((await deliver(hook.url(b), hook.token)).body).toEqual({ ok: true, captured: true });
    expect((await call(a, 'GET', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/capture`, bearer)).body.payload.body).toEqual({
      n: 1,
    });
  });

  it('deduplicates in one process a delivery whose idempotency key the other process took', async () => {
    const bearer = (await token()).token;
    const hook = await webhook(a, bearer);
    const first = await deliver(hook.url(a), hook.token, { 'idempotency-key': 'once' });
    expect(first.status).toBe(202);
    const again = await deliver(hook.url(b), hook.token, { 'idempotency-key': 'once' });
    expect(again).toEqual(first);
  });

  it('counts a token’s requests once for both processes', async () => {
    const bearer = (await token('read')).token;
    const remaining: (string | null)[] = [];
    for (let i = 0; i < API_LIMIT; i += 1) {
      const answer = await call(i % 2 === 0 ? a : b, 'GET', '/api/v1/me', bearer);
      expect(answer.status).toBe(200);
      remaining.push(answer.headers.get('ratelimit-remaining'));
    }
    expect(remaining).toEqual(Array.from({ length: API_LIMIT }, (_, i) => String(API_LIMIT - 1 - i)));
    const limited = await call(b, 'GET', '/api/v1/me', bearer);
    expect(limited.status).toBe(429);
    expect(limited.body.errors[0].code).toBe('rate_limited');
    expect((await call(a, 'GET', '/api/v1/me', bearer)).status).toBe(429);
  });
});
