/**
 * Seeds a workspace with one of every resource the fuzz aims at (folders, workflows with a
 * webhook node, an active one, executions), through the API itself, and returns their ids.
 * Works over `app.inject()` or real HTTP alike: it only needs a `send`.
 */
export const JSONAPI = 'application/vnd.api+json';

export interface FuzzRequest {
  method: string;
  /** Path and query, as sent (already percent-encoded where it should be). */
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

export type Send = (request: FuzzRequest) => Promise<FuzzResponse>;

export interface WorkspaceIds {
  workflow: string[];
  folder: string[];
  execution: string[];
  node: string[];
  webhook: string[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(send: Send, token: string, method: string, url: string, body?: unknown): Promise<Record<string, any>> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: JSONAPI };
  if (body !== undefined) headers['content-type'] = JSONAPI;
  const response = await send({ method, url, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (response.status < 200 || response.status > 299)
    throw new Error(`seeding: ${method} ${url} answered ${response.status}: ${response.body.slice(0, 300)}`);
  return response.body ? JSON.parse(response.body) : {};
}

/** A webhook anyone may call, then a `set` step: runs in microseconds, never fails. */
function graph(label: string) {
  return {
    nodes: [
      { id: 'hook', type: 'webhook', config: { verification: { method: 'none' } }, position: { x: 0, y: 0 } },
      { id: 'shape', type: 'set', name: `${label} step`, config: { values: { seen: '{{ trigger.body }}' } }, position: { x: 240, y: 0 } },
    ],
    edges: [{ source: 'hook', target: 'shape' }],
  };
}

/** `label` goes into every name, so a leak of this workspace's data can be searched for. */
export async function seedWorkspace(send: Send, token: string, label: string): Promise<WorkspaceIds> {
  const ids: WorkspaceIds = { workflow: [], folder: [], execution: [], node: ['hook', 'shape'], webhook: [] };
  for (let i = 1; i <= 2; i += 1) {
    const folder = await call(send, token, 'POST', '/api/v1/folders', {
      data: { type: 'workflow-folder', attributes: { name: `${label} folder ${i}` } },
    });
    ids.folder.push(folder.data.id);
  }
  for (let i = 1; i <= 3; i += 1) {
    const relationships = i === 3 ? { folder: { data: { type: 'workflow-folder', id: ids.folder[0] } } } : undefined;
    const workflow = await call(send, token, 'POST', '/api/v1/workflows', {
      data: {
        type: 'workflow',
        attributes: { name: `${label} flow ${i}`, description: `${label} description` },
        ...(relationships ? { relationships } : {}),
      },
    });
    ids.workflow.push(workflow.data.id);
  }
  for (const id of ids.workflow.slice(0, 2)) {
    const put = await call(send, token, 'PUT', `/api/v1/workflows/${id}/graph`, { data: { graph: graph(label), layout: false } });
    ids.webhook.push(put.graph.nodes.find((node: { id: string }) => node.id === 'hook').config.webhook_id);
  }
  const [active, draft] = ids.workflow as [string, string];
  await call(send, token, 'POST', `/api/v1/workflows/${active}/activate`);
  for (const input of [{ n: 1 }, { n: 2 }])
    ids.execution.push((await call(send, token, 'POST', `/api/v1/workflows/${active}/run`, { data: { input } })).execution_id);
  ids.execution.push(
    (await call(send, token, 'POST', `/api/v1/workflows/${draft}/run`, { data: { draft: true, input: { label } } })).execution_id,
  );
  return ids;
}
