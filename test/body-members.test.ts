import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { node, workflowWith } from './support/engine-helpers.js';
import { createTestApp, JSONAPI, type TestApp } from './support/test-app.js';
import { executionCount } from './support/webhook-helpers.js';

/**
 * A body's top level holds only what the document names for its route (data, meta, jsonapi),
 * and is an object where the document says so: both were taken before (the fuzz run found a
 * run started with an odd top-level member, and a capture turned on by a JSON `null`).
 */
describeEachDialect('top-level members of request bodies', (dialect) => {
  let t: TestApp;
  let workflowId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    workflowId = await workflowWith(t, 'Members', { nodes: [node('hook', 'webhook')], edges: [] });
  });
  afterAll(() => t.close());

  const send = (method: 'POST' | 'PATCH', url: string, payload: string) =>
    t.app.inject({ method, url, headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': JSONAPI, accept: '*/*' }, payload });
  const executions = () => executionCount(t, workflowId);

  it('refuses a member beside data with 400 and a pointer to it, starting nothing', async () => {
    const before = await executions();
    const answer = await send('POST', `/api/v1/workflows/${workflowId}/run`, '{"data":{"draft":true},"\u00e9x~tra/":1}');
    expect(answer.statusCode).toBe(400);
    expect(answer.json().errors[0]).toMatchObject({ code: 'invalid_document', source: { pointer: '/\u00e9x~0tra~1' } });
    expect(await executions()).toBe(before);
  });

  it('refuses JSON that is not an object where an object is declared, changing nothing', async () => {
    for (const payload of ['null', '[]', '"data"', '3']) {
      const answer = await send('POST', `/api/v1/workflows/${workflowId}/webhooks/hook/capture`, payload);
      expect(answer.statusCode, payload).toBe(400);
      expect(answer.json().errors[0], payload).toMatchObject({ code: 'invalid_document', source: { pointer: '' } });
    }
    for (const payload of ['{"data":true}', '{"data":[1]}', '{"data":"x"}']) {
      const answer = await send('POST', `/api/v1/workflows/${workflowId}/webhooks/hook/capture`, payload);
      expect(answer.statusCode, payload).toBe(400);
      expect(answer.json().errors[0].source, payload).toEqual({ pointer: '/data' });
    }
    const state = await t.request('GET', `/api/v1/workflows/${workflowId}/webhooks/hook/capture`);
    expect(state.body.capturing).toBe(false);
  });

  it('refuses a body on an operation that declares none, deleting nothing', async () => {
    const folder = await t.request('POST', '/api/v1/folders', { body: { data: { name: 'Kept' } } });
    const answer = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/folders/${folder.body.data.id}`,
      headers: { authorization: `Bearer ${t.tokens.build}`, 'content-type': JSONAPI },
      payload: '{"data":{}}',
    });
    expect(answer.statusCode).toBe(400);
    expect(answer.json().errors[0]).toMatchObject({ code: 'invalid_document', source: { pointer: '' } });
    expect((await t.request('GET', `/api/v1/folders/${folder.body.data.id}`)).status).toBe(200);
    expect((await t.request('DELETE', `/api/v1/folders/${folder.body.data.id}`)).status).toBe(204);
  });

  it('answers 422, declared, for an unpaired surrogate in an action body', async () => {
    const answer = await send('POST', `/api/v1/workflows/${workflowId}/webhooks/hook/capture`, '{"data":{"x":"\\ud800"}}');
    expect(answer.statusCode).toBe(422);
    expect(answer.json().errors[0].source.pointer).toBe('/data/x');
  });

  it('takes meta and jsonapi beside data, and no body at all for an action', async () => {
    const run = await send(
      'POST',
      `/api/v1/workflows/${workflowId}/run`,
      '{"data":{"draft":true},"meta":{"a":1},"jsonapi":{"version":"1.0"}}',
    );
    expect(run.statusCode).toBe(202);
    const rename = await send('PATCH', `/api/v1/workflows/${workflowId}`, '{"data":{"name":"Renamed"},"meta":{}}');
    expect(rename.statusCode).toBe(200);
    const bare = await t.app.inject({
      method: 'POST',
      url: `/api/v1/workflows/${workflowId}/webhooks/hook/capture`,
      headers: { authorization: `Bearer ${t.tokens.build}` },
    });
    expect(bare.statusCode).toBe(200);
  });
});
