import { expect } from 'vitest';
import type { InjectOptions } from 'fastify';
import { node, edge, type GraphSpec } from './engine-helpers.js';
import type { TestApp } from './test-app.js';

export interface Hook {
  workflowId: string;
  webhookId: string;
  path: string;
  /** The bearer token minted when the node was first saved (bearer verification only). */
  token: string | undefined;
}

/**
 * Creates a workflow whose `hook` node has the given config, saves `rest` of the graph behind it,
 * activates it unless told not to, and returns the endpoint.
 */
export async function webhookWorkflow(
  t: TestApp,
  name: string,
  hookConfig: Record<string, unknown>,
  rest: Partial<GraphSpec> = {},
  options: { activate?: boolean } = {},
): Promise<Hook> {
  const created = await t.request('POST', '/api/v1/workflows', { body: { data: { name } } });
  const workflowId = created.body.data.id as string;
  const graph = { nodes: [node('hook', 'webhook', hookConfig), ...(rest.nodes ?? [])], edges: rest.edges ?? [] };
  const put = await t.request('PUT', `/api/v1/workflows/${workflowId}/graph`, { body: { data: { graph, layout: false } } });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const hook = put.body.graph.nodes.find((n: { id: string }) => n.id === 'hook');
  if (options.activate !== false) expect((await t.request('POST', `/api/v1/workflows/${workflowId}/activate`)).status).toBe(200);
  return {
    workflowId,
    webhookId: hook.config.webhook_id,
    path: `/webhooks/${hook.config.webhook_id}`,
    token: put.body.webhook_tokens.hook,
  };
}

export interface Delivery {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A raw delivery through the app (no API media-type rules: a webhook takes whatever the sender sends). */
export async function deliver(
  t: TestApp,
  path: string,
  options: {
    method?: InjectOptions['method'];
    body?: string | Buffer;
    headers?: Record<string, string | string[]>;
    remoteAddress?: string;
  } = {},
): Promise<Delivery> {
  const response = await t.app.inject({
    method: options.method ?? 'POST',
    url: path,
    headers: { 'content-type': 'application/json', ...(options.headers ?? {}) },
    ...(options.body !== undefined ? { payload: options.body } : {}),
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  });
  return { status: response.statusCode, headers: response.headers, body: response.body, json: () => JSON.parse(response.body) };
}

export async function executionCount(t: TestApp, workflowId: string): Promise<number> {
  const row = await t.deps.db
    .selectFrom('executions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workflow_id', '=', workflowId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export { node, edge };
