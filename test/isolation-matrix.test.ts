import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { describeEachDialect } from './support/dialects.js';
import { sampleGraph } from './support/graphs.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const UNKNOWN = '0190f2a0-0000-7000-8000-000000000000';

type Ids = {
  workflow: string;
  folder: string;
  execution: string;
  store: string;
  key: string;
  connection: string;
  base: string;
  document: string;
  memory: string;
  installation: string;
};

interface RouteCase {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: (ids: Ids) => string;
  body?: (ids: Ids) => unknown;
  /** The body's media type when it is not JSON:API. */
  contentType?: string;
  /** Route addresses a resource by id, so another workspace's id must look unknown. */
  byId: boolean;
  /** What the owner gets when it is not a 2xx: the route's own refusal, reached past scope and plan. */
  owner?: number;
}

/** Every route of the foundation, with a body that would succeed for the owner. */
const ROUTES: RouteCase[] = [
  { method: 'GET', path: () => '/api/v1/me', byId: false },
  { method: 'GET', path: () => '/api/v1/workflows', byId: false },
  { method: 'POST', path: () => '/api/v1/workflows', body: () => ({ data: { name: 'matrix' } }), byId: false },
  { method: 'GET', path: (i) => `/api/v1/workflows/${i.workflow}`, byId: true },
  {
    method: 'PATCH',
    path: (i) => `/api/v1/workflows/${i.workflow}`,
    body: (i) => ({ data: { type: 'workflow', id: i.workflow, attributes: { name: 'renamed' } } }),
    byId: true,
  },
  { method: 'PUT', path: (i) => `/api/v1/workflows/${i.workflow}/graph`, body: () => ({ data: { graph: sampleGraph() } }), byId: true },
  { method: 'POST', path: (i) => `/api/v1/workflows/${i.workflow}/activate`, byId: true },
  { method: 'POST', path: (i) => `/api/v1/workflows/${i.workflow}/deactivate`, byId: true },
  { method: 'POST', path: (i) => `/api/v1/workflows/${i.workflow}/duplicate`, byId: true },
  {
    method: 'PATCH',
    path: (i) => `/api/v1/workflows/${i.workflow}/move`,
    body: (i) => ({ data: { type: 'workflow', id: i.workflow, attributes: { folder_id: null } } }),
    byId: true,
  },
  { method: 'GET', path: () => '/api/v1/folders', byId: false },
  {
    method: 'POST',
    path: () => '/api/v1/folders',
    body: () => ({ data: { type: 'workflow-folder', attributes: { name: 'matrix' } } }),
    byId: false,
  },
  { method: 'GET', path: (i) => `/api/v1/folders/${i.folder}`, byId: true },
  {
    method: 'PATCH',
    path: (i) => `/api/v1/folders/${i.folder}`,
    body: (i) => ({ data: { type: 'workflow-folder', id: i.folder, attributes: { name: 'renamed' } } }),
    byId: true,
  },
  {
    method: 'PATCH',
    path: (i) => `/api/v1/folders/${i.folder}/reorder`,
    body: (i) => ({ data: { type: 'workflow-folder', id: i.folder, attributes: { position: 5 } } }),
    byId: true,
  },
  { method: 'GET', path: () => '/api/v1/step-templates', byId: false },
  { method: 'GET', path: () => '/api/v1/executions', byId: false },
  { method: 'GET', path: (i) => `/api/v1/executions/${i.execution}`, byId: true },
  { method: 'GET', path: (i) => `/api/v1/executions/${i.execution}/steps`, byId: true },
  { method: 'GET', path: (i) => `/api/v1/workflows/${i.workflow}/executions`, byId: true },
  {
    method: 'POST',
    path: (i) => `/api/v1/workflows/${i.workflow}/run`,
    body: () => ({ data: { draft: true, input: { hello: 'matrix' } } }),
    byId: true,
  },
  { method: 'POST', path: (i) => `/api/v1/executions/${i.execution}/replay`, body: () => ({ data: { draft: true } }), byId: true },
  // The owner's execution is a row written by hand, of a snapshot that does not exist: the
  // re-run reaches the service and is refused there (422 at /data/draft), past scope and plan.
  {
    method: 'POST',
    path: (i) => `/api/v1/executions/${i.execution}/rerun`,
    body: () => ({ data: { from_node_id: 'hook' } }),
    byId: true,
    owner: 422,
  },
  { method: 'POST', path: () => '/api/v1/executions/retry', body: () => ({ data: { filter: {} } }), byId: false },
  { method: 'POST', path: (i) => `/api/v1/executions/${i.execution}/cancel`, byId: true },
  { method: 'POST', path: () => '/api/v1/executions/cancel', body: () => ({ data: { filter: {} } }), byId: false },
  { method: 'GET', path: () => '/api/v1/open_api', byId: false },
  { method: 'GET', path: () => '/api/v1/stores', byId: false },
  { method: 'POST', path: () => '/api/v1/stores', body: () => ({ data: { type: 'store', attributes: { name: 'matrix' } } }), byId: false },
  { method: 'GET', path: (i) => `/api/v1/stores/${i.store}`, byId: true },
  {
    method: 'PATCH',
    path: (i) => `/api/v1/stores/${i.store}`,
    body: (i) => ({ data: { type: 'store', id: i.store, attributes: { name: 'renamed', row_cap: 50 } } }),
    byId: true,
  },
  {
    method: 'PUT',
    path: (i) => `/api/v1/stores/${i.store}/rows/${encodeURIComponent(i.key)}`,
    body: () => ({ data: { row: { n: 2 } } }),
    byId: true,
  },
  { method: 'GET', path: (i) => `/api/v1/stores/${i.store}/rows/${encodeURIComponent(i.key)}`, byId: true },
  { method: 'GET', path: (i) => `/api/v1/stores/${i.store}/rows`, byId: true },
  { method: 'GET', path: (i) => `/api/v1/stores/${i.store}/deletions`, byId: true },
  // csv: the test client parses any body whose type mentions json, and NDJSON is not one document.
  { method: 'GET', path: (i) => `/api/v1/stores/${i.store}/dump?format=csv`, byId: true },
  {
    method: 'POST',
    path: () => '/api/v1/stores/restore?slug=matrix-restore',
    body: () => '{"format":"service-store/v1","name":"Restored","schema":{"type":"object"}}\n{"key":"a","row":{}}\n',
    contentType: 'application/x-ndjson',
    byId: false,
  },
  { method: 'GET', path: () => '/api/v1/connections', byId: false },
  {
    method: 'POST',
    path: () => '/api/v1/connections',
    body: () => ({ data: { type: 'connection', attributes: { provider: 'openai', name: 'matrix', api_key: 'sk-matrix-0000' } } }),
    byId: false,
  },
  { method: 'GET', path: (i) => `/api/v1/connections/${i.connection}`, byId: true },
  {
    method: 'PATCH',
    path: (i) => `/api/v1/connections/${i.connection}`,
    body: (i) => ({ data: { type: 'connection', id: i.connection, attributes: { name: 'renamed' } } }),
    byId: true,
  },
  { method: 'GET', path: () => '/api/v1/knowledge-bases', byId: false },
  {
    method: 'POST',
    path: () => '/api/v1/knowledge-bases',
    body: () => ({ data: { type: 'knowledge-base', attributes: { name: 'matrix' } } }),
    byId: false,
  },
  { method: 'GET', path: (i) => `/api/v1/knowledge-bases/${i.base}`, byId: true },
  {
    method: 'PATCH',
    path: (i) => `/api/v1/knowledge-bases/${i.base}`,
    body: (i) => ({ data: { type: 'knowledge-base', id: i.base, attributes: { name: 'renamed' } } }),
    byId: true,
  },
  { method: 'GET', path: (i) => `/api/v1/knowledge-bases/${i.base}/documents`, byId: true },
  {
    method: 'POST',
    path: (i) => `/api/v1/knowledge-bases/${i.base}/documents`,
    body: () => ({ data: { type: 'knowledge-document', attributes: { title: 'matrix', content: 'Matrix text.' } } }),
    byId: true,
  },
  { method: 'GET', path: (i) => `/api/v1/knowledge-bases/${i.base}/documents/${i.document}`, byId: true },
  { method: 'POST', path: (i) => `/api/v1/knowledge-bases/${i.base}/search`, body: () => ({ data: { query: 'matrix' } }), byId: true },
  { method: 'GET', path: () => '/api/v1/memories', byId: false },
  {
    method: 'POST',
    path: () => '/api/v1/memories',
    body: () => ({ data: { type: 'memory', attributes: { name: 'matrix' } } }),
    byId: false,
  },
  { method: 'GET', path: (i) => `/api/v1/memories/${i.memory}`, byId: true },
  {
    method: 'PATCH',
    path: (i) => `/api/v1/memories/${i.memory}`,
    body: (i) => ({ data: { type: 'memory', id: i.memory, attributes: { window: 10 } } }),
    byId: true,
  },
  { method: 'GET', path: (i) => `/api/v1/memories/${i.memory}/sessions`, byId: true },
  {
    method: 'POST',
    path: (i) => `/api/v1/memories/${i.memory}/sessions/s1/messages`,
    body: () => ({ data: { role: 'user', content: 'hello' } }),
    byId: true,
  },
  { method: 'GET', path: (i) => `/api/v1/memories/${i.memory}/sessions/s1/messages`, byId: true },
  { method: 'GET', path: (i) => `/api/v1/memories/${i.memory}/sessions/s1/context?query=hello`, byId: true },
  { method: 'GET', path: (i) => `/api/v1/workflows/${i.workflow}/export`, byId: true },
  { method: 'GET', path: (i) => `/api/v1/workflows/${i.workflow}/calls`, byId: true },
  { method: 'GET', path: () => '/api/v1/workflows/map', byId: false },
  { method: 'GET', path: (i) => `/api/v1/folders/${i.folder}/export`, byId: true },
  { method: 'GET', path: () => '/api/v1/app-installations', byId: false },
  { method: 'POST', path: () => '/api/v1/app-installations/slack/authorize', byId: false },
  { method: 'GET', path: (i) => `/api/v1/app-installations/${i.installation}`, byId: true },
  {
    method: 'POST',
    path: () => '/api/v1/folders/import',
    body: () => ({ data: { document: { format: 'service-folder/v1', name: 'matrix', workflows: [], folders: [], calls: [] } } }),
    byId: false,
  },
  // Deletes last: they remove the fixtures.
  { method: 'DELETE', path: (i) => `/api/v1/app-installations/${i.installation}`, byId: true },
  { method: 'DELETE', path: (i) => `/api/v1/stores/${i.store}/rows/${encodeURIComponent(i.key)}`, byId: true },
  { method: 'DELETE', path: (i) => `/api/v1/stores/${i.store}`, byId: true },
  { method: 'DELETE', path: (i) => `/api/v1/memories/${i.memory}/sessions/s1/messages`, byId: true },
  { method: 'DELETE', path: (i) => `/api/v1/memories/${i.memory}`, byId: true },
  { method: 'DELETE', path: (i) => `/api/v1/knowledge-bases/${i.base}/documents/${i.document}`, byId: true },
  { method: 'DELETE', path: (i) => `/api/v1/knowledge-bases/${i.base}`, byId: true },
  { method: 'DELETE', path: (i) => `/api/v1/connections/${i.connection}`, byId: true },
  { method: 'DELETE', path: (i) => `/api/v1/folders/${i.folder}`, byId: true },
  { method: 'DELETE', path: (i) => `/api/v1/workflows/${i.workflow}`, byId: true },
];

const label = (r: RouteCase) =>
  `${r.method} ${r.path({ workflow: ':id', folder: ':id', execution: ':id', store: ':id', key: ':key', connection: ':id', base: ':id', document: ':document_id', memory: ':id', installation: ':id' })}`;
// An unknown store id, with the same key as the owner's row.
const NO_IDS: Ids = {
  workflow: UNKNOWN,
  folder: UNKNOWN,
  execution: UNKNOWN,
  store: UNKNOWN,
  key: 'order/1 😀',
  connection: UNKNOWN,
  base: UNKNOWN,
  document: UNKNOWN,
  memory: UNKNOWN,
  installation: UNKNOWN,
};
const stripIds = (body: { errors: { id?: string }[] }) => body.errors.map(({ id: _id, ...rest }) => rest);

describeEachDialect('isolation matrix', (dialect) => {
  let t: TestApp;
  let ids: Ids;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    const workflow = (await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Owned' } } })).body.data.id;
    await t.request('PUT', `/api/v1/workflows/${workflow}/graph`, { body: { data: { graph: sampleGraph() } } });
    const folder = (await t.request('POST', '/api/v1/folders', { body: { data: { name: 'Owned' } } })).body.data.id;
    // An execution row as the engine writes it, waiting far in the future, so it can be cancelled.
    const now = '2026-11-01T00:00:00.000000Z';
    const execution = newId();
    await t.deps.db
      .insertInto('executions')
      .values({
        id: execution,
        workspace_id: t.workspaces.main,
        workflow_id: workflow,
        workflow_snapshot_id: newId(),
        status: 'waiting',
        triggered_by_step_id: null,
        parent_execution_id: null,
        call_depth: 0,
        retry_of_execution_id: null,
        user_id: null,
        started_at: now,
        finished_at: null,
        inserted_at: now,
        updated_at: now,
        context: null,
        inputs: null,
        output: null,
        error: null,
        step_count: 0,
        run_at: '2099-01-01T00:00:00.000000Z',
        lease_owner: null,
        lease_expires_at: null,
        response: null,
      })
      .execute();
    const store = (await t.request('POST', '/api/v1/stores', { body: { data: { type: 'store', attributes: { name: 'Owned' } } } })).body
      .data.id;
    expect(
      (await t.request('PUT', `/api/v1/stores/${store}/rows/${encodeURIComponent('order/1 😀')}`, { body: { data: { row: { n: 1 } } } }))
        .status,
    ).toBe(201);
    const connection = (
      await t.request('POST', '/api/v1/connections', {
        body: { data: { type: 'connection', attributes: { provider: 'openai', name: 'Owned', api_key: 'sk-owned-0000' } } },
      })
    ).body.data.id;
    const base = (
      await t.request('POST', '/api/v1/knowledge-bases', { body: { data: { type: 'knowledge-base', attributes: { name: 'Owned' } } } })
    ).body.data.id;
    const document = (
      await t.request('POST', `/api/v1/knowledge-bases/${base}/documents`, {
        body: { data: { type: 'knowledge-document', attributes: { title: 'Owned', content: 'Owned text.' } } },
      })
    ).body.data.id;
    const memory = (await t.request('POST', '/api/v1/memories', { body: { data: { type: 'memory', attributes: { name: 'Owned' } } } })).body
      .data.id;
    await t.request('POST', `/api/v1/memories/${memory}/sessions/s1/messages`, { body: { data: { role: 'user', content: 'first' } } });
    await t.deps.apps.setApp('slack', { settings: { client_id: '1.2' }, secrets: { client_secret: 'matrix-client-secret' } });
    const installation = (
      await t.deps.apps.install({
        provider: 'slack',
        workspace: { id: t.workspaces.main },
        accountId: 'T0MATRIX',
        botUserId: 'U0BOT',
        botId: 'B0BOT',
        credentials: { bot_token: 'xoxb-matrix' },
      })
    ).id;
    ids = { workflow, folder, execution, store, key: 'order/1 😀', connection, base, document, memory, installation };
  });
  afterAll(() => t.close());

  const send = (route: RouteCase, token: string, target = ids) =>
    t.request(route.method, route.path(target), {
      token,
      ...(route.body ? { body: route.body(target) } : {}),
      ...(route.contentType ? { contentType: route.contentType } : {}),
    });

  describe('read token', () => {
    for (const route of ROUTES) {
      const write = route.method !== 'GET';
      it(`${label(route)} ${write ? 'is refused with 403 forbidden' : 'is allowed'}`, async () => {
        const res = await send(route, t.tokens.read);
        if (write) {
          expect(res.status).toBe(403);
          expect(res.body.errors[0].code).toBe('forbidden');
        } else {
          expect(res.status).toBe(200);
        }
      });
    }
  });

  describe('free workspace', () => {
    for (const route of ROUTES) {
      const path = route.path(NO_IDS);
      const open = path === '/api/v1/step-templates' || path === '/api/v1/open_api';
      it(`${label(route)} ${open ? 'is readable on any plan' : 'is refused with 403 plan_required'}`, async () => {
        const res = await send(route, t.tokens.free);
        if (open) expect(res.status).toBe(200);
        else {
          expect(res.status).toBe(403);
          expect(res.body.errors[0].code).toBe('plan_required');
        }
      });
    }
  });

  describe('ids of another workspace', () => {
    for (const route of ROUTES.filter((r) => r.byId)) {
      it(`${label(route)} answers 404 exactly as for an unknown id`, async () => {
        const foreign = await send(route, t.tokens.other);
        const unknown = await send(route, t.tokens.other, NO_IDS);
        expect(foreign.status).toBe(404);
        expect(unknown.status).toBe(404);
        expect(stripIds(foreign.body)).toEqual(stripIds(unknown.body));
        expect(foreign.headers['content-type']).toBe(unknown.headers['content-type']);
      });
    }

    it('lists never show another workspace’s resources', async () => {
      const workflows = await t.request('GET', '/api/v1/workflows', { token: t.tokens.other });
      const folders = await t.request('GET', '/api/v1/folders', { token: t.tokens.other });
      const executions = await t.request('GET', '/api/v1/executions', { token: t.tokens.other });
      const stores = await t.request('GET', '/api/v1/stores', { token: t.tokens.other });
      expect(stores.body.data).toEqual([]);
      for (const path of ['/api/v1/connections', '/api/v1/knowledge-bases', '/api/v1/memories', '/api/v1/app-installations'])
        expect((await t.request('GET', path, { token: t.tokens.other })).body.data, path).toEqual([]);
      expect(workflows.body.data).toEqual([]);
      expect(folders.body.data).toEqual([]);
      expect(executions.body.data).toEqual([]);
    });
  });

  describe('owner with a build token', () => {
    for (const route of ROUTES) {
      it(`${label(route)} succeeds`, async () => {
        const res = await send(route, t.tokens.build);
        if (route.owner !== undefined) expect(res.status).toBe(route.owner);
        else {
          expect(res.status).toBeGreaterThanOrEqual(200);
          expect(res.status).toBeLessThan(300);
        }
      });
    }
  });
});
