import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSwitchyardClient, type SwitchyardClient } from '../clients/typescript/src/index.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The workflow, execution and store flows end to end through the typed client
 * (clients/typescript), over real HTTP against a listening app: the client's types come from the
 * OpenAPI document, its calls are openapi-fetch's, and every answer is also checked against the
 * document by the contract hook of the test app.
 */
describeEachDialect('typed client end to end', (dialect) => {
  let t: TestApp;
  let client: SwitchyardClient;
  let reader: SwitchyardClient;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    client = createSwitchyardClient({ baseUrl: base, token: t.tokens.build });
    reader = createSwitchyardClient({ baseUrl: base, token: t.tokens.read });
  });
  afterAll(() => t.close());

  it('creates a workflow, puts its graph, runs it, and reads its execution and steps', async () => {
    const created = await client.POST('/api/v1/workflows', { body: { data: { name: 'Client flow', description: 'typed' } } });
    expect(created.response.status).toBe(201);
    const workflowId = created.data!.data.id;
    expect(created.data!.data.attributes!.name).toBe('Client flow');

    const graph = {
      nodes: [
        { id: 'hook', type: 'webhook', config: { response_mode: 'immediate' } },
        { id: 'double', type: 'code', config: { code: 'return { doubled: input.body.n * 2 };' } },
      ],
      edges: [{ source: 'hook', target: 'double' }],
    };
    const put = await client.PUT('/api/v1/workflows/{id}/graph', { params: { path: { id: workflowId } }, body: { data: { graph } } });
    expect(put.error).toBeUndefined();
    expect(put.data!.graph.nodes!).toHaveLength(2);

    const run = await client.POST('/api/v1/workflows/{id}/run', {
      params: { path: { id: workflowId } },
      body: { data: { draft: true, input: { n: 21 } } },
    });
    expect(run.response.status).toBe(202);
    const executionId = run.data!.execution_id;
    await t.deps.engine.idle();

    const execution = await client.GET('/api/v1/executions/{id}', { params: { path: { id: executionId } } });
    expect(execution.data!.data.attributes!.status).toBe('completed');
    const listed = await client.GET('/api/v1/executions', {
      params: { query: { filter: { workflow_id: { eq: workflowId }, status: { in: ['completed', 'failed'] } }, page: { limit: 5 } } },
    });
    expect(listed.data!.data.map((e) => e.id)).toEqual([executionId]);
    const steps = await client.GET('/api/v1/executions/{workflow_execution_id}/steps', {
      params: { path: { workflow_execution_id: executionId }, query: { fields: { 'execution-step': 'node_id,status,output' } } },
    });
    const double = steps.data!.data.find((step) => step.attributes!.node_id === 'double');
    expect(double!.attributes).toMatchObject({ status: 'completed', output: { doubled: 42 } });
  });

  it('answers errors as typed JSON:API error documents, and a read token cannot build', async () => {
    const missing = await client.GET('/api/v1/workflows/{id}', { params: { path: { id: '01a2522c-f336-7319-a45b-54f0d860a982' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error!.errors[0]!.code).toBe('not_found');
    const refused = await reader.POST('/api/v1/workflows', { body: { data: { name: 'Nope' } } });
    expect(refused.response.status).toBe(403);
    const bad = await client.GET('/api/v1/workflows', {
      params: { query: { filter: { name: { ilike: 'client%' } }, page: { limit: 0 } } },
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error!.errors[0]!.source?.parameter).toBe('page[limit]');
  });

  it('creates a store, writes, lists, reads and deletes its rows', async () => {
    const store = await client.POST('/api/v1/stores', {
      body: {
        data: {
          name: 'Orders',
          slug: 'client-orders',
          schema: { type: 'object', properties: { status: { type: 'string' }, amount: { type: 'number' } } },
        },
      },
    });
    expect(store.response.status).toBe(201);
    const storeId = store.data!.data.id;
    for (const [key, status, amount] of [
      ['a/1', 'paid', 10],
      ['a/2', 'open', 25],
      ['b/1', 'paid', 40],
    ] as const) {
      const put = await client.PUT('/api/v1/stores/{store_id}/rows/{key}', {
        params: { path: { store_id: storeId, key } },
        body: { data: { row: { status, amount } } },
      });
      expect(put.response.status).toBe(201);
      expect(put.data!.key).toBe(key);
    }
    const paid = await client.GET('/api/v1/stores/{store_id}/rows', {
      params: { path: { store_id: storeId }, query: { filter: { 'row.status': { eq: 'paid' }, 'row.amount': { greater_than: 5 } } } },
    });
    expect(paid.data!.data.map((row) => row.id).sort()).toEqual(['a/1', 'b/1']);
    const one = await client.GET('/api/v1/stores/{store_id}/rows/{key}', { params: { path: { store_id: storeId, key: 'a/2' } } });
    expect(one.data!.data.attributes!.row).toEqual({ status: 'open', amount: 25 });
    const removed = await client.DELETE('/api/v1/stores/{store_id}/rows/{key}', { params: { path: { store_id: storeId, key: 'a/2' } } });
    expect(removed.response.status).toBe(204);
    const after = await client.GET('/api/v1/stores/{id}', { params: { path: { id: storeId } } });
    expect(after.data!.data.attributes!.row_count).toBe(2);
  });
});
