import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataStamp } from '../src/db/data-stamp.js';
import { findEndpoint } from '../src/store/webhook-repository.js';
import type { WebhookEndpoints } from '../src/webhooks/webhook-endpoints.js';
import { TEST_DATABASE_URL } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { deliver, executionCount, webhookWorkflow, type Hook } from './support/webhook-helpers.js';

/**
 * On PostgreSQL a webhook delivery is served from the endpoints cache as the notices heard so far
 * have it, without first making sure every committed one has arrived (webhook-endpoints.ts). Here
 * the notices "never arrive": the cache's stamp is replaced by one whose heard value never changes,
 * while a fresh look (the round trip) always finds something new. So every endpoint served is
 * as stale as it can be, and only the commit's check of the rows (migration 0021) and the fresh
 * look before a refusal keep each delivery decided on what the database holds.
 */
describe.skipIf(!TEST_DATABASE_URL)('webhook deliveries on a stale endpoint [postgres]', () => {
  let t: TestApp;
  let endpoints: WebhookEndpoints;
  let freshLooks = 0;

  beforeAll(async () => {
    t = await createTestApp('postgres');
    endpoints = t.deps.webhookEndpoints;
    const stale: DataStamp = () => {
      freshLooks += 1;
      return `fresh-${freshLooks}`;
    };
    stale.heard = () => 'heard';
    (endpoints as unknown as { stamp: DataStamp }).stamp = stale;
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (hook: Hook, token: string | undefined, headers: Record<string, string> = {}) =>
    deliver(t, hook.path, { body: '{"n":1}', headers: { authorization: `Bearer ${token}`, ...headers } });
  const rotate = async (hook: Hook) => {
    const rotated = await t.request('POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/rotate`);
    expect(rotated.status).toBe(200);
    return rotated.body.token as string;
  };

  it('serves deliveries from the cache without a fresh look while nothing changes', async () => {
    const hook = await webhookWorkflow(t, `Quiet ${Date.now()}`, {});
    expect((await post(hook, hook.token)).status).toBe(202);
    const looks = freshLooks;
    for (let i = 0; i < 3; i += 1) expect((await post(hook, hook.token)).status).toBe(202);
    expect(freshLooks).toBe(looks);
    expect(await executionCount(t, hook.workflowId)).toBe(4);
  });

  it('refuses a rotated bearer token although the endpoint served still knew it: the commit finds the row changed and writes nothing', async () => {
    const hook = await webhookWorkflow(t, `Rotated ${Date.now()}`, {});
    expect((await post(hook, hook.token)).status).toBe(202);
    const token = await rotate(hook);
    expect((await post(hook, hook.token)).status).toBe(401);
    expect(await executionCount(t, hook.workflowId)).toBe(1);
    expect((await post(hook, token)).status).toBe(202);
    expect(await executionCount(t, hook.workflowId)).toBe(2);
  });

  it('accepts a token the endpoint served did not know yet: a refusal is made only after a fresh look', async () => {
    const hook = await webhookWorkflow(t, `New token ${Date.now()}`, {});
    expect((await post(hook, hook.token)).status).toBe(202);
    const token = await rotate(hook);
    // The cache still holds the old token's endpoint (heard nothing): the new token fails on it first.
    const current = await findEndpoint(t.deps.db, hook.webhookId, true);
    expect((await endpoints.find(hook.webhookId))!.rowStamp).not.toBe(current!.row_stamp);
    expect((await post(hook, token)).status).toBe(202);
    expect(await executionCount(t, hook.workflowId)).toBe(2);
  });

  it('answers 404 for a workflow deactivated after its endpoint was cached, and starts nothing', async () => {
    const hook = await webhookWorkflow(t, `Deactivated ${Date.now()}`, {});
    expect((await post(hook, hook.token)).status).toBe(202);
    expect((await t.request('POST', `/api/v1/workflows/${hook.workflowId}/deactivate`)).status).toBe(200);
    expect((await endpoints.find(hook.webhookId))?.snapshotId).not.toBeNull();
    expect((await post(hook, hook.token)).status).toBe(404);
    expect(await executionCount(t, hook.workflowId)).toBe(1);
    // And the other way: activated again while the cache says inactive.
    expect((await t.request('POST', `/api/v1/workflows/${hook.workflowId}/activate`)).status).toBe(200);
    expect((await post(hook, hook.token)).status).toBe(202);
    expect(await executionCount(t, hook.workflowId)).toBe(2);
  });

  it('captures a sample only on a fresh look, and runs nothing for it', async () => {
    const hook = await webhookWorkflow(t, `Capture ${Date.now()}`, {});
    expect((await post(hook, hook.token)).status).toBe(202);
    expect((await t.request('POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/capture`)).status).toBe(200);
    const captured = await post(hook, hook.token);
    expect(captured.json()).toEqual({ ok: true, captured: true });
    expect(await executionCount(t, hook.workflowId)).toBe(1);
  });

  it('keeps the idempotency key of a delivery decided again: one execution, and the key finds it', async () => {
    const hook = await webhookWorkflow(t, `Keyed ${Date.now()}`, {});
    expect((await post(hook, hook.token)).status).toBe(202);
    // A change to the workflow's row that changes nothing the delivery is decided on: a rename.
    const renamed = await t.request('PATCH', `/api/v1/workflows/${hook.workflowId}`, {
      body: { data: { type: 'workflow', id: hook.workflowId, attributes: { name: `Keyed again ${Date.now()}` } } },
    });
    expect(renamed.status).toBe(200);
    const first = await post(hook, hook.token, { 'idempotency-key': 'stale-once' });
    expect(first.status).toBe(202);
    const again = await post(hook, hook.token, { 'idempotency-key': 'stale-once' });
    expect(again.json().execution_id).toBe(first.json().execution_id);
    expect(await executionCount(t, hook.workflowId)).toBe(2);
  });

  it('answers 503 with Retry-After, having written nothing, when the endpoint changes under every decision', async () => {
    const hook = await webhookWorkflow(t, `Churning ${Date.now()}`, {});
    const resolve = (endpoints as unknown as { resolve: (row: object) => object }).resolve;
    // Every endpoint read carries row versions the database never has.
    (endpoints as unknown as { resolve: (row: object) => object }).resolve = function (this: unknown, row: object) {
      return { ...resolve.call(this, row), rowStamp: 'never:never' };
    };
    try {
      await endpoints.find(hook.webhookId, 'database');
      const answer = await post(hook, hook.token);
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.json().errors[0]).toMatchObject({ status: '503', code: 'service_unavailable' });
      expect(await executionCount(t, hook.workflowId)).toBe(0);
    } finally {
      (endpoints as unknown as { resolve: typeof resolve }).resolve = resolve;
      await endpoints.find(hook.webhookId, 'database');
    }
    expect((await post(hook, hook.token)).status).toBe(202);
  });
});
