import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { sampleGraph } from './support/graphs.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describeEachDialect('workflows', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const res = await t.request('POST', '/api/v1/workflows', { body: { data: { name, ...extra } } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; attributes: Record<string, unknown> };
  };

  describe('create', () => {
    it('creates a bare workflow from the flat body with the default attributes only', async () => {
      const res = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Orders', description: 'sync orders' } } });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`http://sy.test/api/v1/workflows/${res.body.data.id}`);
      expect(res.body.data.type).toBe('workflow');
      expect(Object.keys(res.body.data.attributes).sort()).toEqual(['ai_auto_probe', 'created_at', 'name', 'status', 'updated_at']);
      expect(res.body.data.attributes).toMatchObject({ name: 'Orders', status: 'inactive', ai_auto_probe: false });
      expect(res.body.data.attributes.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    });

    it('creates from the JSON:API envelope and returns opt-in fields on request', async () => {
      const res = await t.request(
        'POST',
        '/api/v1/workflows?fields[workflow]=name,description,graph,user_id,workspace_id,build_mode,build_prompt',
        {
          body: { data: { type: 'workflow', attributes: { name: 'Envelope', description: 'd', build_mode: 'guided' } } },
        },
      );
      expect(res.status).toBe(201);
      expect(res.body.data.attributes).toEqual({
        name: 'Envelope',
        description: 'd',
        graph: { nodes: [], edges: [] },
        user_id: expect.any(String),
        workspace_id: t.workspaces.main,
        build_mode: 'guided',
        build_prompt: null,
      });
    });

    it('imports a bare graph given as document (test/documents-*.test.ts cover imports)', async () => {
      const res = await t.request('POST', '/api/v1/workflows?fields[workflow]=name,graph', {
        body: { data: { name: 'x', document: { nodes: [], edges: [] } } },
      });
      expect(res.status).toBe(201);
      expect(res.body.data.attributes).toEqual({ name: 'x', graph: { nodes: [], edges: [] } });
      expect(res.body.meta).toMatchObject({ source: { format: 'graph' }, placeholders: [] });
    });

    it('answers 422 pointing at a missing name, and writes nothing', async () => {
      const before = await t.request('GET', '/api/v1/workflows?page[count]=true');
      const res = await t.request('POST', '/api/v1/workflows', {
        body: { data: { type: 'workflow', attributes: { description: 'no name' } } },
      });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].source).toEqual({ pointer: '/data/attributes/name' });
      const after = await t.request('GET', '/api/v1/workflows?page[count]=true');
      expect(after.body.meta.count).toBe(before.body.meta.count);
    });

    it('answers 422 for read-only attributes and 409 for a wrong type', async () => {
      const readOnly = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'x', status: 'active' } } });
      expect(readOnly.status).toBe(422);
      expect(readOnly.body.errors[0].source).toEqual({ pointer: '/data/status' });
      const wrongType = await t.request('POST', '/api/v1/workflows', { body: { data: { type: 'store', attributes: { name: 'x' } } } });
      expect(wrongType.status).toBe(409);
      expect(wrongType.body.errors[0]).toMatchObject({ code: 'type_mismatch', source: { pointer: '/data/type' } });
    });

    it('answers 400 with a pointer when data is missing', async () => {
      const res = await t.request('POST', '/api/v1/workflows', { body: { name: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].source.pointer).toBe('/data');
    });
  });

  describe('read, patch, delete', () => {
    it('reads a workflow and 404s an unknown or malformed id', async () => {
      const wf = await create('Readable');
      const res = await t.request('GET', `/api/v1/workflows/${wf.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data.attributes.name).toBe('Readable');
      expect(res.body.links.self).toBe(`http://sy.test/api/v1/workflows/${wf.id}`);
      expect((await t.request('GET', '/api/v1/workflows/0190f2a0-0000-7000-8000-000000000000')).status).toBe(404);
      expect((await t.request('GET', '/api/v1/workflows/not-a-uuid')).status).toBe(404);
    });

    it('patches name and description only', async () => {
      const wf = await create('Before');
      const res = await t.request('PATCH', `/api/v1/workflows/${wf.id}?fields[workflow]=name,description`, {
        body: { data: { type: 'workflow', id: wf.id, attributes: { name: 'After', description: 'new' } } },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.attributes).toEqual({ name: 'After', description: 'new' });
      const refused = await t.request('PATCH', `/api/v1/workflows/${wf.id}`, {
        body: { data: { type: 'workflow', id: wf.id, attributes: { graph: {} } } },
      });
      expect(refused.status).toBe(422);
      expect(refused.body.errors[0].source).toEqual({ pointer: '/data/attributes/graph' });
      const mismatch = await t.request('PATCH', `/api/v1/workflows/${wf.id}`, {
        body: { data: { type: 'workflow', id: '0190f2a0-0000-7000-8000-000000000000', attributes: { name: 'x' } } },
      });
      expect(mismatch.status).toBe(409);
      expect((await t.request('GET', `/api/v1/workflows/${wf.id}`)).body.data.attributes.name).toBe('After');
    });

    it('deletes a workflow with 204, then 404s it', async () => {
      const wf = await create('Doomed');
      const res = await t.request('DELETE', `/api/v1/workflows/${wf.id}`);
      expect(res.status).toBe(204);
      expect(res.raw).toBe('');
      expect((await t.request('GET', `/api/v1/workflows/${wf.id}`)).status).toBe(404);
      expect((await t.request('DELETE', `/api/v1/workflows/${wf.id}`)).status).toBe(404);
    });
  });

  describe('graph', () => {
    it('replaces the canvas, lays it out, and answers plain JSON', async () => {
      const wf = await create('Canvas');
      const res = await t.request('PUT', `/api/v1/workflows/${wf.id}/graph`, { body: { data: { graph: sampleGraph() } } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.graph.nodes.map((n: { id: string }) => n.id)).toEqual(['hook', 'shape', 'reply']);
      const [hook, shape] = res.body.graph.nodes;
      expect(shape.position.x).toBeGreaterThan(hook.position.x);
      expect(res.body.graph.nodes[0].config.verification).toEqual({ method: 'bearer' });
      const read = await t.request('GET', `/api/v1/workflows/${wf.id}?fields[workflow]=graph`);
      expect(read.body.data.attributes.graph).toEqual(res.body.graph);
    });

    it('keeps the payload positions when layout is false', async () => {
      const wf = await create('Manual layout');
      const res = await t.request('PUT', `/api/v1/workflows/${wf.id}/graph`, { body: { data: { graph: sampleGraph(), layout: false } } });
      expect(res.status).toBe(200);
      expect(res.body.graph.nodes.map((n: { position: unknown }) => n.position)).toEqual([
        { x: 0, y: 0 },
        { x: 10, y: 0 },
        { x: 20, y: 0 },
      ]);
    });

    it('answers 422 with a pointer per violation and keeps the previous canvas', async () => {
      const wf = await create('Broken');
      await t.request('PUT', `/api/v1/workflows/${wf.id}/graph`, { body: { data: { graph: sampleGraph(), layout: false } } });
      const graph = {
        nodes: [
          { id: 'a', type: 'teleport', config: {}, position: { x: 0, y: 0 } },
          { id: 'b', type: 'http', config: { method: 'FETCH', url: 'https://example.com' }, position: { x: 0, y: 0 } },
          { id: 'b', type: 'code', config: { code: 'return 1' }, position: { x: 0, y: 0 } },
        ],
        edges: [
          { source: 'b', target: 'ghost' },
          { source: 'b', source_port: 'sideways', target: 'a' },
        ],
      };
      const res = await t.request('PUT', `/api/v1/workflows/${wf.id}/graph`, { body: { data: { graph } } });
      expect(res.status).toBe(422);
      const byCode = Object.fromEntries(
        res.body.errors.map((e: { code: string; source: { pointer: string } }) => [e.code, e.source.pointer]),
      );
      expect(byCode).toMatchObject({
        unknown_step_type: '/data/graph/nodes/0/type',
        invalid_config: '/data/graph/nodes/1/config/method',
        duplicate_node_id: '/data/graph/nodes/2/id',
        dangling_edge: '/data/graph/edges/0/target',
        unknown_port: '/data/graph/edges/1/source_port',
      });
      const read = await t.request('GET', `/api/v1/workflows/${wf.id}?fields[workflow]=graph`);
      expect(read.body.data.attributes.graph.nodes).toHaveLength(3);
    });

    it('answers 422 for a non-boolean layout', async () => {
      const wf = await create('Bad layout');
      const res = await t.request('PUT', `/api/v1/workflows/${wf.id}/graph`, { body: { data: { graph: sampleGraph(), layout: 'yes' } } });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe('/data/layout');
    });
  });

  describe('activation', () => {
    it('activates a valid canvas into a snapshot and deactivates it, keeping the snapshot', async () => {
      const wf = await create('Live');
      await t.request('PUT', `/api/v1/workflows/${wf.id}/graph`, { body: { data: { graph: sampleGraph() } } });
      const on = await t.request('POST', `/api/v1/workflows/${wf.id}/activate?fields[workflow]=status,active_snapshot_id`);
      expect(on.status).toBe(200);
      expect(on.body.data.attributes.status).toBe('active');
      const snapshotId = on.body.data.attributes.active_snapshot_id;
      const snapshot = await t.deps.db.selectFrom('workflow_snapshots').selectAll().where('id', '=', snapshotId).executeTakeFirstOrThrow();
      expect(JSON.parse(snapshot.graph).nodes).toHaveLength(3);
      expect(snapshot.workflow_id).toBe(wf.id);

      const off = await t.request('POST', `/api/v1/workflows/${wf.id}/deactivate`, { body: {} });
      expect(off.status).toBe(200);
      expect(off.body.data.attributes.status).toBe('inactive');
      expect(await t.deps.db.selectFrom('workflow_snapshots').select('id').where('id', '=', snapshotId).executeTakeFirst()).toBeDefined();
    });

    it('accepts {data:{}} as an action body', async () => {
      const wf = await create('Action body');
      await t.request('PUT', `/api/v1/workflows/${wf.id}/graph`, { body: { data: { graph: sampleGraph() } } });
      expect((await t.request('POST', `/api/v1/workflows/${wf.id}/activate`, { body: { data: {} } })).status).toBe(200);
    });

    it('refuses to activate an empty or invalid canvas with 422', async () => {
      const empty = await create('Empty');
      const res = await t.request('POST', `/api/v1/workflows/${empty.id}/activate`);
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'invalid_graph', source: { pointer: '/data/attributes/graph/nodes' } });
      expect((await t.request('GET', `/api/v1/workflows/${empty.id}`)).body.data.attributes.status).toBe('inactive');
    });

    it('refuses to activate a cyclic canvas', async () => {
      const wf = await create('Cycle');
      const graph = {
        nodes: [
          { id: 'a', type: 'code', config: { code: 'return 1' }, position: { x: 0, y: 0 } },
          { id: 'b', type: 'code', config: { code: 'return 2' }, position: { x: 0, y: 0 } },
        ],
        edges: [
          { source: 'a', target: 'b' },
          { source: 'b', target: 'a' },
        ],
      };
      expect((await t.request('PUT', `/api/v1/workflows/${wf.id}/graph`, { body: { data: { graph } } })).status).toBe(200);
      const res = await t.request('POST', `/api/v1/workflows/${wf.id}/activate`);
      expect(res.status).toBe(422);
      expect(res.body.errors[0].detail).toContain('cycle');
    });
  });

  describe('duplicate', () => {
    it('copies as "<name> (copy)", inactive, with the same canvas', async () => {
      const wf = await create('Original');
      await t.request('PUT', `/api/v1/workflows/${wf.id}/graph`, { body: { data: { graph: sampleGraph() } } });
      await t.request('POST', `/api/v1/workflows/${wf.id}/activate`);
      const res = await t.request('POST', `/api/v1/workflows/${wf.id}/duplicate?fields[workflow]=name,status,graph`);
      expect(res.status).toBe(201);
      expect(res.body.data.id).not.toBe(wf.id);
      expect(res.body.data.attributes.name).toBe('Original (copy)');
      expect(res.body.data.attributes.status).toBe('inactive');
      expect(res.body.data.attributes.graph.nodes).toHaveLength(3);
    });
  });

  describe('list', () => {
    it('lists newest first with pages and links', async () => {
      const names = ['Lst1', 'Lst2', 'Lst3', 'Lst4', 'Lst5'];
      for (const name of names) await create(name);
      const first = await t.request('GET', '/api/v1/workflows?filter[name][string_starts_with]=Lst&page[limit]=2&page[count]=true');
      expect(first.status).toBe(200);
      expect(first.body.data.map((w: { attributes: { name: string } }) => w.attributes.name)).toEqual(['Lst5', 'Lst4']);
      expect(first.body.meta.count).toBe(5);
      expect(first.body.links.next).toContain('page');
      const next = await t.request('GET', first.body.links.next.replace('http://sy.test', ''));
      expect(next.body.data.map((w: { attributes: { name: string } }) => w.attributes.name)).toEqual(['Lst3', 'Lst2']);
      const byName = await t.request('GET', '/api/v1/workflows?filter[name][in]=Lst2,Lst4&sort=name');
      expect(byName.body.data.map((w: { attributes: { name: string } }) => w.attributes.name)).toEqual(['Lst2', 'Lst4']);
    });

    it('answers 400 naming the parameter for a bad filter', async () => {
      const res = await t.request('GET', '/api/v1/workflows?filter[colour][eq]=red');
      expect(res.status).toBe(400);
      expect(res.body.errors[0].source.parameter).toBe('filter[colour]');
      const include = await t.request('GET', '/api/v1/workflows?include=folder');
      expect(include.status).toBe(400);
      expect(include.body.errors[0].source.parameter).toBe('include');
    });
  });
});
