import { createHmac } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetentionPruner } from '../src/engine/retention.js';
import { describeEachDialect } from './support/dialects.js';
import { executionRow, stepRows } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { deliver, edge, executionCount, node, webhookWorkflow } from './support/webhook-helpers.js';

const stripe = new Stripe('sk_test_only_for_signing');
const echo = { nodes: [node('echo', 'set', { values: { got: '{{ input.body }}' } })], edges: [edge('hook', 'echo')] };
const withoutDate = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'date'));

describeEachDialect('inbound webhooks', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('endpoints', () => {
    it('gives each webhook node an id, URL and bearer token on first save, and keeps them across edits', async () => {
      const hook = await webhookWorkflow(t, 'Endpoints', {}, echo, { activate: false });
      expect(hook.webhookId).toMatch(/^[0-9a-f-]{36}$/);
      expect(hook.token).toMatch(/^whk_[0-9A-Za-z]{40}$/);
      const read = await t.request('GET', `/api/v1/workflows/${hook.workflowId}?fields[workflow]=graph`);
      const stored = read.body.data.attributes.graph.nodes[0].config;
      expect(stored).toMatchObject({
        webhook_id: hook.webhookId,
        webhook_url: `http://sy.test/webhooks/${hook.webhookId}`,
        verification: { method: 'bearer' },
      });
      // Saving the graph read back (ids included, a second webhook added) keeps the first endpoint and mints only the new one.
      const graph = read.body.data.attributes.graph;
      graph.nodes.push(node('other', 'webhook', { verification: { method: 'none' } }));
      const again = await t.request('PUT', `/api/v1/workflows/${hook.workflowId}/graph`, { body: { data: { graph, layout: false } } });
      expect(again.body.webhook_tokens).toEqual({});
      const [first, second] = again.body.graph.nodes.filter((n: { type: string }) => n.type === 'webhook');
      expect(first.config.webhook_id).toBe(hook.webhookId);
      expect(second.config).toMatchObject({ webhook_unauthenticated: true, verification: { method: 'none' } });
      expect(second.config.webhook_id).not.toBe(hook.webhookId);
    });

    it('keeps an HMAC secret write-only: required once, never returned, kept when a save omits it', async () => {
      const created = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Secret' } } });
      const id = created.body.data.id;
      const put = (config: Record<string, unknown>) =>
        t.request('PUT', `/api/v1/workflows/${id}/graph`, {
          body: { data: { graph: { nodes: [node('hook', 'webhook', config)], edges: [] }, layout: false } },
        });
      const missing = await put({ verification: { method: 'hmac', format: 'github' } });
      expect(missing.status).toBe(422);
      expect(missing.body.errors[0]).toMatchObject({
        code: 'invalid_config',
        source: { pointer: '/data/graph/nodes/0/config/verification/secret' },
      });
      const saved = await put({ verification: { method: 'hmac', format: 'github', secret: 'gh-secret-1' } });
      expect(saved.status).toBe(200);
      expect(saved.raw).not.toContain('gh-secret-1');
      const read = await t.request('GET', `/api/v1/workflows/${id}?fields[workflow]=graph`);
      expect(read.raw).not.toContain('gh-secret-1');
      const row = await t.deps.db.selectFrom('webhooks').selectAll().where('workflow_id', '=', id).executeTakeFirstOrThrow();
      expect(row.secret_encrypted).not.toContain('gh-secret-1');
      expect((await put({ verification: { method: 'hmac', format: 'github' } })).status).toBe(200);
      await t.request('POST', `/api/v1/workflows/${id}/activate`);
      const body = '{"zen":"keep it"}';
      expect(
        (await deliver(t, `/webhooks/${row.id}`, { body, headers: { 'x-hub-signature-256': await sign('gh-secret-1', body) } })).status,
      ).toBe(202);
    });

    it('gives a duplicate its own endpoints, and drops the endpoint of a removed node', async () => {
      const hook = await webhookWorkflow(t, 'Original', { verification: { method: 'none' } }, echo);
      const copy = await t.request('POST', `/api/v1/workflows/${hook.workflowId}/duplicate`);
      const copyGraph = (await t.request('GET', `/api/v1/workflows/${copy.body.data.id}?fields[workflow]=graph`)).body.data.attributes
        .graph;
      expect(copyGraph.nodes[0].config.webhook_id).not.toBe(hook.webhookId);
      await t.request('PUT', `/api/v1/workflows/${hook.workflowId}/graph`, {
        body: { data: { graph: { nodes: [node('start', 'webhook', { verification: { method: 'none' } })], edges: [] }, layout: false } },
      });
      expect((await deliver(t, hook.path, { body: '{}' })).status).toBe(404);
    });
  });

  describe('verification', () => {
    it('runs a delivery with the right bearer token, and refuses a wrong or missing one with 401 and no execution', async () => {
      const hook = await webhookWorkflow(t, 'Bearer', {}, echo);
      const ok = await deliver(t, `${hook.path}?source=test`, {
        body: '{"n":1}',
        headers: { authorization: `Bearer ${hook.token}`, 'x-custom': 'yes' },
      });
      expect(ok.status).toBe(202);
      expect(ok.json()).toEqual({ ok: true, execution_id: expect.any(String) });
      const execution = await executionRow(t, ok.json().execution_id);
      const trigger = JSON.parse(execution.inputs!);
      expect(trigger).toMatchObject({ method: 'POST', query: { source: 'test' }, body: { n: 1 } });
      expect(trigger.headers['x-custom']).toBe('yes');
      expect(trigger.headers.authorization).toBeUndefined();
      const attempts: Record<string, string>[] = [
        { authorization: 'Bearer whk_wrongwrongwrongwrongwrongwrongwrongwrong' },
        {},
        { authorization: `Basic ${hook.token}` },
      ];
      for (const headers of attempts) {
        const refused = await deliver(t, hook.path, { body: '{"n":2}', headers });
        expect(refused.status).toBe(401);
        expect(refused.headers['content-type']).toBe('application/vnd.api+json');
        expect(refused.json().errors[0]).toMatchObject({ status: '401', code: 'unauthorized' });
      }
      expect(await executionCount(t, hook.workflowId)).toBe(1);
    });

    it('rotates a bearer token: the new one works and the old one fails on the very next request', async () => {
      const hook = await webhookWorkflow(t, 'Rotate', {}, echo);
      const rotated = await t.request('POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/rotate`);
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({
        token: expect.stringMatching(/^whk_/),
        webhook_id: hook.webhookId,
        webhook_url: `http://sy.test${hook.path}`,
      });
      expect((await deliver(t, hook.path, { body: '{}', headers: { authorization: `Bearer ${hook.token}` } })).status).toBe(401);
      expect((await deliver(t, hook.path, { body: '{}', headers: { authorization: `Bearer ${rotated.body.token}` } })).status).toBe(202);
      expect((await t.request('POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/rotate`, { token: t.tokens.read })).status).toBe(
        403,
      );
      expect((await t.request('POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/rotate`, { token: t.tokens.other })).status).toBe(
        404,
      );
      const none = await webhookWorkflow(t, 'Open', { verification: { method: 'none' } }, echo);
      expect((await t.request('POST', `/api/v1/workflows/${none.workflowId}/webhooks/hook/rotate`)).status).toBe(422);
    });

    it('checks GitHub signatures made by Octokit: right secret passes; wrong secret, altered body or a duplicated header fail', async () => {
      const hook = await webhookWorkflow(t, 'GitHub', { verification: { method: 'hmac', format: 'github', secret: 'octo-secret' } }, echo);
      const body = JSON.stringify({ action: 'opened', number: 7 });
      const signature = await sign('octo-secret', body);
      const ok = await deliver(t, hook.path, { body, headers: { 'x-hub-signature-256': signature, 'x-github-event': 'pull_request' } });
      expect(ok.status).toBe(202);
      const trigger = JSON.parse((await executionRow(t, ok.json().execution_id)).inputs!);
      expect(trigger.headers['x-hub-signature-256']).toBeUndefined();
      expect(trigger.headers['x-github-event']).toBe('pull_request');
      expect((await deliver(t, hook.path, { body, headers: { 'x-hub-signature-256': await sign('other-secret', body) } })).status).toBe(
        401,
      );
      expect((await deliver(t, hook.path, { body: body.replace('7', '8'), headers: { 'x-hub-signature-256': signature } })).status).toBe(
        401,
      );
      expect((await deliver(t, hook.path, { body, headers: { 'x-hub-signature-256': [signature, signature] } })).status).toBe(401);
      expect((await deliver(t, hook.path, { body })).status).toBe(401);
    });

    it('checks Stripe signatures made by the Stripe library within 300 s either way', async () => {
      const secret = 'whsec_test_secret';
      const hook = await webhookWorkflow(t, 'Stripe', { verification: { method: 'hmac', format: 'stripe', secret } }, echo);
      const body = JSON.stringify({ id: 'evt_1', type: 'charge.succeeded' });
      const now = Math.floor(t.clock.nowMs() / 1000);
      const header = (timestamp: number, signWith = secret) =>
        stripe.webhooks.generateTestHeaderString({ payload: body, secret: signWith, timestamp });
      expect((await deliver(t, hook.path, { body, headers: { 'stripe-signature': header(now) } })).status).toBe(202);
      expect((await deliver(t, hook.path, { body, headers: { 'stripe-signature': header(now - 299) } })).status).toBe(202);
      expect((await deliver(t, hook.path, { body, headers: { 'stripe-signature': header(now - 301) } })).status).toBe(401);
      expect((await deliver(t, hook.path, { body, headers: { 'stripe-signature': header(now + 301) } })).status).toBe(401);
      expect((await deliver(t, hook.path, { body, headers: { 'stripe-signature': header(now, 'whsec_wrong') } })).status).toBe(401);
      expect((await deliver(t, hook.path, { body: `${body} `, headers: { 'stripe-signature': header(now) } })).status).toBe(401);
    });

    it('checks a plain hex HMAC in the header the node names, cross-checked with Node crypto', async () => {
      const hook = await webhookWorkflow(
        t,
        'Plain',
        { verification: { method: 'hmac', format: 'plain', header: 'X-Acme-Signature', secret: 'acme' } },
        echo,
      );
      const body = '{"order":42}';
      const digest = createHmac('sha256', 'acme').update(body).digest('hex');
      expect((await deliver(t, hook.path, { body, headers: { 'x-acme-signature': digest } })).status).toBe(202);
      expect(
        (await deliver(t, hook.path, { body, headers: { 'x-acme-signature': createHmac('sha256', 'nope').update(body).digest('hex') } }))
          .status,
      ).toBe(401);
      expect((await deliver(t, hook.path, { body, headers: { 'x-signature': digest } })).status).toBe(401);
    });
  });

  describe('activation', () => {
    it('answers an unknown id and an inactive workflow with the same status, headers and body, and stops on deactivation', async () => {
      const hook = await webhookWorkflow(t, 'Activation', { verification: { method: 'none' } }, echo);
      expect((await deliver(t, hook.path, { body: '{}' })).status).toBe(202);
      expect((await t.request('POST', `/api/v1/workflows/${hook.workflowId}/deactivate`)).status).toBe(200);
      const inactive = await deliver(t, hook.path, { body: '{}' });
      const unknown = await deliver(t, '/webhooks/01a2038b-0000-7000-8000-000000000000', { body: '{}' });
      const malformed = await deliver(t, '/webhooks/not-a-uuid', { body: '{}' });
      expect(inactive.status).toBe(404);
      for (const other of [unknown, malformed]) {
        expect(other.status).toBe(inactive.status);
        expect(withoutDate(other.headers)).toEqual(withoutDate(inactive.headers));
        expect(other.body).toBe(inactive.body);
      }
      expect(inactive.headers['x-request-id']).toBeUndefined();
      expect(await executionCount(t, hook.workflowId)).toBe(1);
    });

    it('runs the pinned snapshot, firing only the delivered webhook node', async () => {
      const hook = await webhookWorkflow(t, 'Pinned', { verification: { method: 'none' }, response_mode: 'last_step' }, echo);
      const answer = await deliver(t, hook.path, { body: '{"v":1}' });
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ got: { v: 1 } });
      const rows = await stepRows(t, answer.headers['x-execution-id'] as string);
      expect(rows.map((s) => [s.node_id, s.status])).toEqual([
        ['hook', 'completed'],
        ['echo', 'completed'],
      ]);
      // An edit of the live canvas changes nothing until the next activation.
      const graph = (await t.request('GET', `/api/v1/workflows/${hook.workflowId}?fields[workflow]=graph`)).body.data.attributes.graph;
      graph.nodes[1].config.values = { changed: true };
      await t.request('PUT', `/api/v1/workflows/${hook.workflowId}/graph`, { body: { data: { graph, layout: false } } });
      expect((await deliver(t, hook.path, { body: '{"v":2}' })).json()).toEqual({ got: { v: 2 } });
      await t.request('POST', `/api/v1/workflows/${hook.workflowId}/activate`);
      expect((await deliver(t, hook.path, { body: '{"v":3}' })).json()).toEqual({ changed: true });
    });
  });

  describe('response modes', () => {
    it('last_step answers 200 with the terminal step’s output', async () => {
      const hook = await webhookWorkflow(
        t,
        'Last step',
        { verification: { method: 'none' }, response_mode: 'last_step' },
        {
          nodes: [node('shape', 'code', { code: 'return { total: input.body.items.reduce((a, b) => a + b, 0) };' })],
          edges: [edge('hook', 'shape')],
        },
      );
      const answer = await deliver(t, hook.path, { body: '{"items":[1,2,3]}' });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.json()).toEqual({ total: 6 });
    });

    it('respond_step answers with the respond step’s status, headers and body while the run goes on', async () => {
      const hook = await webhookWorkflow(
        t,
        'Respond',
        { verification: { method: 'none' }, response_mode: 'respond_step' },
        {
          nodes: [
            node('reply', 'respond_to_webhook', {
              status: 201,
              headers: { 'x-order': '{{ trigger.body.id }}', 'content-length': '1' },
              body: { accepted: '{{ trigger.body.id }}' },
            }),
            node('pause', 'wait', { duration_ms: 60_000 }),
          ],
          edges: [edge('hook', 'reply'), edge('reply', 'pause')],
        },
      );
      const answer = await deliver(t, hook.path, { body: '{"id":"A-7"}' });
      expect(answer.status).toBe(201);
      expect(answer.headers['x-order']).toBe('A-7');
      expect(answer.json()).toEqual({ accepted: 'A-7' });
      await t.deps.engine.idle();
      expect((await executionRow(t, answer.headers['x-execution-id'] as string)).status).toBe('waiting');
    });

    it('answers as soon as the respond step is committed, not when the steps after it end', async () => {
      const hook = await webhookWorkflow(
        t,
        'Early answer',
        { verification: { method: 'none' }, response_mode: 'respond_step' },
        {
          nodes: [
            node('reply', 'respond_to_webhook', { status: 200, body: 'early' }),
            node('slow', 'code', { code: 'const until = Date.now() + 1500; while (Date.now() < until) {} return 1;' }),
          ],
          edges: [edge('hook', 'reply'), edge('reply', 'slow')],
        },
      );
      const answer = await deliver(t, hook.path, { body: '{}' });
      expect(answer.status).toBe(200);
      expect(answer.body).toBe('early');
      expect((await executionRow(t, answer.headers['x-execution-id'] as string)).status).not.toBe('completed');
      await t.deps.engine.idle();
      expect((await executionRow(t, answer.headers['x-execution-id'] as string)).status).toBe('completed');
    });

    it('writes the answer of a respond step that ends the run with the run’s end: one update of the execution row', async () => {
      const hook = await webhookWorkflow(
        t,
        'Respond last',
        { verification: { method: 'none' }, response_mode: 'respond_step' },
        {
          nodes: [
            node('shape', 'set', { values: { seen: '{{ input.body.n }}' } }),
            node('reply', 'respond_to_webhook', { status: 200, body: '{{ nodes.shape }}' }),
          ],
          edges: [edge('hook', 'shape'), edge('shape', 'reply')],
        },
      );
      await deliver(t, hook.path, { body: '{"n":0}' });
      await t.deps.engine.idle();
      const before = t.database.writes.version(['executions']);
      const answer = await deliver(t, hook.path, { body: '{"n":7}' });
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ seen: 7 });
      // Answered once the commit holding the answer is durable: here the run's last one.
      const executionId = answer.headers['x-execution-id'] as string;
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('completed');
      expect(JSON.parse(execution.response!)).toMatchObject({ status: 200, body: { seen: 7 } });
      expect((await stepRows(t, executionId)).map((s) => [s.node_id, s.status])).toEqual([
        ['hook', 'completed'],
        ['shape', 'completed'],
        ['reply', 'completed'],
      ]);
      await t.deps.engine.idle();
      // The insert, then one update carrying the answer and the end (not one for each); on
      // PostgreSQL a worker's claim is one more.
      expect(t.database.writes.version(['executions']) - before).toBe(dialect === 'sqlite' ? 2 : 3);
    });

    it('answers 504 when the run does not answer in time, and the run goes on', async () => {
      const hook = await webhookWorkflow(
        t,
        'Slow',
        { verification: { method: 'none' }, response_mode: 'respond_step', timeout_ms: 100 },
        {
          nodes: [node('pause', 'wait', { duration_ms: 60_000 }), node('reply', 'respond_to_webhook', { status: 200, body: 'late' })],
          edges: [edge('hook', 'pause'), edge('pause', 'reply')],
        },
      );
      const answer = await deliver(t, hook.path, { body: '{}' });
      expect(answer.status).toBe(504);
      expect(answer.json().errors[0]).toMatchObject({ status: '504', code: 'webhook_timeout' });
      const executionId = answer.headers['x-execution-id'] as string;
      expect((await executionRow(t, executionId)).status).toBe('waiting');
      t.clock.advance(60_000);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      expect((await executionRow(t, executionId)).status).toBe('completed');
    });

    it('answers 500 without internals when the run fails before answering', async () => {
      const hook = await webhookWorkflow(
        t,
        'Broken',
        { verification: { method: 'none' }, response_mode: 'respond_step' },
        {
          nodes: [
            node('boom', 'code', { code: 'throw new Error("db password is hunter2")' }),
            node('reply', 'respond_to_webhook', { status: 200, body: 'never' }),
          ],
          edges: [edge('hook', 'boom'), edge('boom', 'reply')],
        },
      );
      const answer = await deliver(t, hook.path, { body: '{}' });
      expect(answer.status).toBe(500);
      expect(answer.json().errors[0]).toMatchObject({ status: '500', code: 'webhook_run_failed' });
      expect(answer.body).not.toContain('hunter2');
      expect(answer.body).not.toContain('boom');
    });
  });

  describe('sample capture', () => {
    it('captures the next authenticated delivery even while inactive, runs nothing, records its shape, and ends capturing', async () => {
      const hook = await webhookWorkflow(t, 'Capture', {}, echo, { activate: false });
      const started = await t.request('POST', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/capture`);
      expect(started.status).toBe(200);
      expect(started.body).toMatchObject({ webhook_id: hook.webhookId, capturing: true, payload: null });
      // An unauthenticated delivery is refused and does not use the capture up.
      expect((await deliver(t, hook.path, { body: '{"a":1}' })).status).toBe(401);
      const captured = await deliver(t, hook.path, {
        body: '{"customer":{"email":"ada@example.com"},"amount":12.5}',
        headers: { authorization: `Bearer ${hook.token}` },
      });
      expect(captured.status).toBe(202);
      expect(captured.json()).toEqual({ ok: true, captured: true });
      expect(await executionCount(t, hook.workflowId)).toBe(0);
      const read = await t.request('GET', `/api/v1/workflows/${hook.workflowId}/webhooks/hook/capture`);
      expect(read.body).toMatchObject({
        capturing: false,
        captured_at: expect.any(String),
        payload: { method: 'POST', body: { customer: { email: 'ada@example.com' }, amount: 12.5 } },
      });
      expect(read.body.payload.headers.authorization).toBeUndefined();
      expect(read.body.shape.properties.body).toMatchObject({
        type: 'object',
        properties: {
          amount: { type: 'number' },
          customer: { type: 'object', properties: { email: { type: 'string', format: 'email' } } },
        },
      });
      // Capturing ended: the inactive workflow's endpoint answers 404 again.
      expect((await deliver(t, hook.path, { body: '{}', headers: { authorization: `Bearer ${hook.token}` } })).status).toBe(404);
    });
  });

  describe('payloads', () => {
    it('parses JSON, form and text bodies, keeps others as base64, and refuses bad JSON with 400 and an oversized body with 413', async () => {
      const hook = await webhookWorkflow(
        t,
        'Payloads',
        { verification: { method: 'none' }, response_mode: 'last_step', max_body_bytes: 64 },
        { nodes: [node('echo', 'set', { values: { body: '{{ input.body }}' } })], edges: [edge('hook', 'echo')] },
      );
      const cases: [string, string | Buffer, unknown][] = [
        ['application/json', '{"a":[1,2]}', { a: [1, 2] }],
        ['application/x-www-form-urlencoded', 'a=1&b=two+words&a=3', { a: ['1', '3'], b: 'two words' }],
        ['text/plain; charset=utf-8', 'hello', 'hello'],
        [
          'application/octet-stream',
          Buffer.from([0, 1, 2, 255]),
          { content_type: 'application/octet-stream', encoding: 'base64', data: 'AAEC/w==' },
        ],
      ];
      for (const [type, body, expected] of cases) {
        const answer = await deliver(t, hook.path, { body, headers: { 'content-type': type } });
        expect(answer.status, type).toBe(200);
        expect(answer.json()).toEqual({ body: expected });
      }
      const bad = await deliver(t, hook.path, { body: '{"a":', headers: { 'content-type': 'application/json' } });
      expect(bad.status).toBe(400);
      expect(bad.json().errors[0].code).toBe('invalid_body');
      const large = await deliver(t, hook.path, { body: JSON.stringify({ pad: 'x'.repeat(100) }) });
      expect(large.status).toBe(413);
      expect(large.json().errors[0].code).toBe('payload_too_large');
    });
  });

  describe('idempotency', () => {
    it('answers a repeated Idempotency-Key or X-GitHub-Delivery with the first delivery’s execution', async () => {
      const hook = await webhookWorkflow(t, 'Idempotent', { verification: { method: 'none' } }, echo);
      const first = await deliver(t, hook.path, { body: '{}', headers: { 'idempotency-key': 'order-1' } });
      const again = await deliver(t, hook.path, { body: '{}', headers: { 'idempotency-key': 'order-1' } });
      expect(again.json()).toEqual(first.json());
      const github = await deliver(t, hook.path, { body: '{}', headers: { 'x-github-delivery': 'gh-1' } });
      expect((await deliver(t, hook.path, { body: '{}', headers: { 'x-github-delivery': 'gh-1' } })).json()).toEqual(github.json());
      const other = await deliver(t, hook.path, { body: '{}', headers: { 'idempotency-key': 'order-2' } });
      expect(other.json().execution_id).not.toBe(first.json().execution_id);
      expect(await executionCount(t, hook.workflowId)).toBe(3);
      // Past 24 hours the key starts a new execution.
      t.clock.advance(24 * 60 * 60 * 1000 + 1);
      const later = await deliver(t, hook.path, { body: '{}', headers: { 'idempotency-key': 'order-1' } });
      expect(later.json().execution_id).not.toBe(first.json().execution_id);
    });

    it('forgets keys older than 24 hours in the retention pass, even when executions are kept forever', async () => {
      const hook = await webhookWorkflow(t, 'Forgetful', { verification: { method: 'none' } }, echo);
      await deliver(t, hook.path, { body: '{}', headers: { 'idempotency-key': 'k-1' } });
      const keys = () =>
        t.deps.db.selectFrom('webhook_deliveries').select('idempotency_key').where('webhook_id', '=', hook.webhookId).execute();
      const pruner = new RetentionPruner(t.deps.db, t.clock, 0);
      await pruner.runOnce();
      expect(await keys()).toEqual([{ idempotency_key: 'k-1' }]);
      t.clock.advance(24 * 60 * 60 * 1000 + 1);
      await pruner.runOnce();
      expect(await keys()).toEqual([]);
      expect(await executionCount(t, hook.workflowId)).toBe(1);
    });

    it('starts one execution for two concurrent deliveries with the same key', async () => {
      const hook = await webhookWorkflow(t, 'Racing', { verification: { method: 'none' } }, echo);
      const answers = await Promise.all([1, 2, 3].map(() => deliver(t, hook.path, { body: '{}', headers: { 'idempotency-key': 'race' } })));
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
      expect(new Set(answers.map((a) => a.json().execution_id)).size).toBe(1);
      expect(await executionCount(t, hook.workflowId)).toBe(1);
    });
  });
});

describeEachDialect('webhook rate limit', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { webhookRateLimit: 2, trustProxy: ['127.0.0.1'] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 429 with Retry-After past the per-address limit, counting X-Forwarded-For only from a trusted proxy', async () => {
    const hook = await webhookWorkflow(t, 'Limited', { verification: { method: 'none' } }, echo);
    const from = (address: string, remoteAddress = '127.0.0.1') =>
      deliver(t, hook.path, { body: '{}', headers: { 'x-forwarded-for': address }, remoteAddress });
    expect((await from('203.0.113.1')).status).toBe(202);
    expect((await from('203.0.113.1')).status).toBe(202);
    const limited = await from('203.0.113.1');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json().errors[0].code).toBe('rate_limited');
    // Another client behind the same trusted proxy has its own budget.
    expect((await from('203.0.113.2')).status).toBe(202);
    // From an untrusted peer the header is ignored: the peer's own address is counted.
    expect((await from('203.0.113.9', '198.51.100.7')).status).toBe(202);
    expect((await from('203.0.113.10', '198.51.100.7')).status).toBe(202);
    expect((await from('203.0.113.11', '198.51.100.7')).status).toBe(429);
  });
});
