import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { edge, node, workflowWith } from './support/engine-helpers.js';

const caller = (...targets: string[]) => ({
  nodes: [node('start', 'webhook'), ...targets.map((id, i) => node(`call${i}`, 'call_workflow', { workflow_id: id }))],
  edges: targets.map((_, i) => edge('start', `call${i}`)),
});
const leaf = () => ({ nodes: [node('start', 'webhook'), node('done', 'set', { values: { ok: true } })], edges: [edge('start', 'done')] });

describeEachDialect('calls and the workspace map', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  const put = async (id: string, graph: unknown) =>
    expect((await t.request('PUT', `/api/v1/workflows/${id}/graph`, { body: { data: { graph, layout: false } } })).status).toBe(200);

  it('answers distinct callers and callees with active, counting the live canvas and the active snapshot', async () => {
    const child = await workflowWith(t, 'Child', leaf());
    const parent = await workflowWith(t, 'Parent', caller(child, child), { activate: true });
    const draft = await workflowWith(t, 'Draft caller', caller(child));
    const calls = await t.request('GET', `/api/v1/workflows/${child}/calls`);
    expect(calls.status).toBe(200);
    expect(calls.headers['content-type']).toMatch(/^application\/json/);
    expect(calls.body).toEqual({
      callers: [
        { id: draft, name: 'Draft caller', active: false },
        { id: parent, name: 'Parent', active: true },
      ],
      callees: [],
    });
    expect((await t.request('GET', `/api/v1/workflows/${parent}/calls`)).body).toEqual({
      callers: [],
      callees: [{ id: child, name: 'Child', active: false }],
    });

    // The parent's canvas drops the call: its active snapshot still makes it, until it is deactivated or activated again.
    await put(parent, leaf());
    expect((await t.request('GET', `/api/v1/workflows/${child}/calls`)).body.callers.map((c: { name: string }) => c.name)).toEqual([
      'Draft caller',
      'Parent',
    ]);
    expect((await t.request('POST', `/api/v1/workflows/${parent}/deactivate`)).status).toBe(200);
    expect((await t.request('GET', `/api/v1/workflows/${child}/calls`)).body.callers.map((c: { name: string }) => c.name)).toEqual([
      'Draft caller',
    ]);
    expect((await t.request('POST', `/api/v1/workflows/${parent}/activate`)).status).toBe(200);
    expect((await t.request('GET', `/api/v1/workflows/${child}/calls`)).body.callers.map((c: { name: string }) => c.name)).toEqual([
      'Draft caller',
    ]);

    // A deleted caller calls nothing; a duplicate calls what its source's canvas does.
    const copy = await t.request('POST', `/api/v1/workflows/${draft}/duplicate`);
    expect((await t.request('GET', `/api/v1/workflows/${child}/calls`)).body.callers.map((c: { name: string }) => c.name)).toEqual([
      'Draft caller',
      'Draft caller (copy)',
    ]);
    expect((await t.request('DELETE', `/api/v1/workflows/${draft}`)).status).toBe(204);
    expect((await t.request('GET', `/api/v1/workflows/${child}/calls`)).body.callers).toEqual([
      { id: copy.body.data.id, name: 'Draft caller (copy)', active: false },
    ]);
  });

  it("answers another workspace's workflow like an unknown one", async () => {
    const mine = await workflowWith(t, 'Mine', leaf());
    const foreign = await t.request('GET', `/api/v1/workflows/${mine}/calls`, { token: t.tokens.other });
    const unknown = await t.request('GET', '/api/v1/workflows/0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e/calls', { token: t.tokens.other });
    expect(foreign.status).toBe(404);
    expect(foreign.raw.replace(/"id":"[^"]+"/, '')).toBe(unknown.raw.replace(/"id":"[^"]+"/, ''));
  });

  it('maps chains, diamonds, cycles and strays into systems with columns, and the rest standalone', async () => {
    // A fresh workspace view: the other workspace's token, so earlier tests do not show.
    const token = t.tokens.other;
    const make = async (name: string, folderId?: string) => {
      const res = await t.request('POST', '/api/v1/workflows', {
        token,
        body: { data: { name, ...(folderId ? { folder_id: folderId } : {}) } },
      });
      return res.body.data.id as string;
    };
    const folder = (await t.request('POST', '/api/v1/folders', { token, body: { data: { name: 'Orders' } } })).body.data.id as string;
    const [a, b, c, d] = [
      await make('a intake', folder),
      await make('b price', folder),
      await make('c tax', folder),
      await make('d notify'),
    ];
    const [x, y] = [await make('x ping'), await make('y pong')];
    const lone = await make('lone');
    const save = async (id: string, graph: unknown) =>
      expect((await t.request('PUT', `/api/v1/workflows/${id}/graph`, { token, body: { data: { graph, layout: false } } })).status).toBe(
        200,
      );
    await save(a, caller(b, c));
    await save(b, caller(d));
    await save(c, caller(d));
    await save(x, caller(y));
    await save(y, caller(x));
    expect((await t.request('POST', `/api/v1/workflows/${x}/activate`, { token })).status).toBe(200);

    const map = await t.request('GET', '/api/v1/workflows/map', { token });
    expect(map.status).toBe(200);
    expect(map.headers['content-type']).toMatch(/^application\/json/);
    const [orders, pingPong] = map.body.systems;
    expect(orders.columns.map((column: Array<{ id: string }>) => column.map((e) => e.id))).toEqual([[a], [b, c], [d]]);
    expect(orders.columns[0][0]).toEqual({ id: a, name: 'a intake', active: false, folder_id: folder });
    expect(orders.edges).toEqual([
      [a, b],
      [a, c],
      [b, d],
      [c, d],
    ]);
    expect(orders.folder).toEqual({ id: folder, name: 'Orders' });
    expect(orders.strays).toEqual([d]);
    expect(orders.cycles).toEqual([]);
    expect(pingPong.columns.map((column: Array<{ id: string }>) => column.map((e) => e.id))).toEqual([[x], [y]]);
    expect(pingPong.cycles).toEqual([[x, y]]);
    expect(pingPong.folder).toBeNull();
    expect(map.body.standalone.map((e: { id: string }) => e.id)).toEqual([lone]);

    const active = await t.request('GET', '/api/v1/workflows/map?status=active', { token });
    expect(active.body).toEqual({ systems: [], standalone: [{ id: x, name: 'x ping', active: true, folder_id: null }] });
    const searched = await t.request('GET', '/api/v1/workflows/map?search=TAX', { token });
    expect(searched.body.systems.map((s: { edges: unknown[] }) => s.edges.length)).toEqual([4]);
    expect(searched.body.standalone).toEqual([]);
    const bad = await t.request('GET', '/api/v1/workflows/map?status=paused', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ code: 'invalid_query_parameter', source: { parameter: 'status' } });
    expect((await t.request('GET', '/api/v1/workflows/map?colour=red', { token })).status).toBe(400);
  });
});
