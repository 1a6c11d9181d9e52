import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { edge, node, workflowWith } from './support/engine-helpers.js';
import { n8nFixture, rowCounts } from './support/document-helpers.js';

describeEachDialect('folder documents', (dialect) => {
  let t: TestApp;
  let folderId: string;
  let ids: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    folderId = (await t.request('POST', '/api/v1/folders', { body: { data: { name: 'Orders' } } })).body.data.id;
    const subId = (await t.request('POST', '/api/v1/folders', { body: { data: { name: 'Helpers', parent_id: folderId } } })).body.data.id;
    const file = async (id: string, folder: string) =>
      expect(
        (
          await t.request('PATCH', `/api/v1/workflows/${id}/move`, {
            body: { data: { type: 'workflow', id, attributes: { folder_id: folder } } },
          })
        ).status,
      ).toBe(200);
    const outside = await workflowWith(t, 'Outside', { nodes: [node('start', 'code')], edges: [] });
    const tax = await workflowWith(t, 'Tax', {
      nodes: [node('start', 'code', { code: 'return { tax: trigger.body.total * 0.2 };' })],
      edges: [],
    });
    const intake = await workflowWith(t, 'Intake', {
      nodes: [
        node('hook', 'webhook'),
        node('tax', 'call_workflow', { workflow_id: tax }),
        node('log', 'call_workflow', { workflow_id: outside }),
      ],
      edges: [edge('hook', 'tax'), edge('tax', 'log')],
    });
    await file(intake, folderId);
    await file(tax, subId);
    ids = { outside, tax, intake };
  });
  afterAll(() => t.close());

  it('exports the folder, its sub-folders one level deep, every workflow inside and the calls among them', async () => {
    const res = await t.request('GET', `/api/v1/folders/${folderId}/export`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const document = res.body;
    expect(document).toMatchObject({ format: 'service-folder/v1', name: 'Orders' });
    expect(document.workflows.map((w: { name: string }) => w.name)).toEqual(['Intake']);
    expect(document.folders).toEqual([{ name: 'Helpers', workflows: [expect.objectContaining({ format: 'service/v1', name: 'Tax' })] }]);
    const keyOf = (name: string) =>
      [...document.workflows, ...document.folders[0].workflows].find((w: { name: string }) => w.name === name).export_key;
    expect(document.calls).toEqual([[keyOf('Intake'), keyOf('Tax')]]);
    // The call out of the folder is still named by reference, not listed among the folder's calls.
    expect(document.workflows[0].references.workflows.map((r: { name: string }) => r.name)).toEqual(['Tax', 'Outside']);
  });

  it('imports it as a new tree in one transaction, rewiring the calls among its workflows to the new ids', async () => {
    const document = (await t.request('GET', `/api/v1/folders/${folderId}/export`)).body;
    const res = await t.request('POST', '/api/v1/folders/import', { body: { data: { document, name: 'Orders (restored)' } } });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`http://sy.test/api/v1/folders/${res.body.data.id}`);
    expect(res.body.data).toMatchObject({ type: 'workflow-folder', attributes: { name: 'Orders (restored)', parent_id: null } });
    const meta = res.body.meta;
    expect(meta.folders.map((f: { name: string; parent_id: string | null }) => [f.name, f.parent_id])).toEqual([
      ['Orders (restored)', null],
      ['Helpers', res.body.data.id],
    ]);
    const intake = meta.workflows.find((w: { name: string }) => w.name === 'Intake');
    const tax = meta.workflows.find((w: { name: string }) => w.name === 'Tax');
    expect(intake.folder_id).toBe(res.body.data.id);
    expect(tax.folder_id).toBe(meta.folders[1].id);
    const graph = (await t.request('GET', `/api/v1/workflows/${intake.id}?fields[workflow]=graph`)).body.data.attributes.graph;
    expect(graph.nodes[1].config.workflow_id).toBe(tax.id);
    // Outside the folder: bound by its export key, which this workspace still has.
    expect(graph.nodes[2].config.workflow_id).toBe(ids.outside);
    expect(intake.requirements.bindings).toEqual([]);
    expect(intake.webhook_tokens.hook).toMatch(/^whk_/);
    expect((await t.request('GET', `/api/v1/workflows/${tax.id}/calls`)).body.callers).toEqual([
      { id: intake.id, name: 'Intake', active: false },
    ]);
  });

  it('imports into another workspace, where the call leaving the folder stays to bind', async () => {
    const document = (await t.request('GET', `/api/v1/folders/${folderId}/export`)).body;
    const res = await t.request('POST', '/api/v1/folders/import', { token: t.tokens.other, body: { data: { document } } });
    expect(res.status).toBe(201);
    const intake = res.body.meta.workflows.find((w: { name: string }) => w.name === 'Intake');
    const tax = res.body.meta.workflows.find((w: { name: string }) => w.name === 'Tax');
    expect(intake.requirements.bindings).toEqual([
      expect.objectContaining({ pointer: '/nodes/2/config/workflow_id', resource: 'workflow' }),
    ]);
    const graph = (await t.request('GET', `/api/v1/workflows/${intake.id}?fields[workflow]=graph`, { token: t.tokens.other })).body.data
      .attributes.graph;
    expect(graph.nodes[1].config.workflow_id).toBe(tax.id);
  });

  it('imports an n8n export:workflow list into one new folder, calls among them rewired by n8n id', async () => {
    const child = {
      id: 'n8nChild',
      name: 'Child',
      nodes: [{ name: 'In', type: 'n8n-nodes-base.executeWorkflowTrigger', typeVersion: 1, parameters: {}, position: [0, 0] }],
      connections: {},
    };
    const parent = {
      id: 'n8nParent',
      name: 'Parent',
      nodes: [
        { name: 'Call', type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1, parameters: { workflowId: 'n8nChild' }, position: [0, 0] },
      ],
      connections: {},
    };
    const res = await t.request('POST', '/api/v1/folders/import', {
      body: { data: { document: [parent, child, ...n8nFixture('n8n-repo-cli-export-combined.json')], name: 'From n8n' } },
    });
    expect(res.status).toBe(201);
    const byName = Object.fromEntries(res.body.meta.workflows.map((w: { name: string }) => [w.name, w]));
    expect(Object.keys(byName).sort()).toEqual(['Child', 'Parent', 'active-workflow', 'inactive-workflow']);
    const graph = (await t.request('GET', `/api/v1/workflows/${byName.Parent.id}?fields[workflow]=graph`)).body.data.attributes.graph;
    expect(graph.nodes[0].config.workflow_id).toBe(byName.Child.id);
    expect(byName.Child.export_key).toBe('n8n-n8nChild');
  });

  it('refuses a bad document, a second level of folders and a foreign parent, creating nothing', async () => {
    const before = await rowCounts(t);
    const document = (await t.request('GET', `/api/v1/folders/${folderId}/export`)).body;
    const nested = await t.request('POST', '/api/v1/folders/import', { body: { data: { document, parent_id: folderId } } });
    expect(nested.status).toBe(422);
    expect(nested.body.errors[0].source.pointer).toBe('/data/parent_id');
    const foreign = (await t.request('POST', '/api/v1/folders', { token: t.tokens.other, body: { data: { name: 'Theirs' } } })).body.data
      .id;
    const theirs = await t.request('POST', '/api/v1/folders/import', {
      body: { data: { document: { ...document, folders: [] }, parent_id: foreign } },
    });
    expect(theirs.status).toBe(422);
    expect(theirs.body.errors[0].detail).toBe('parent_id names no folder of this workspace');
    const broken = structuredClone(document);
    broken.folders[0].workflows[0].graph.nodes[0].type = 'nope';
    const invalid = await t.request('POST', '/api/v1/folders/import', { body: { data: { document: broken } } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors[0]).toMatchObject({
      code: 'unknown_step_type',
      source: { pointer: '/data/document/folders/0/workflows/0/graph/nodes/0/type' },
    });
    const single = await t.request('POST', '/api/v1/folders/import', { body: { data: { document: document.workflows[0] } } });
    expect(single.status).toBe(422);
    expect(single.body.errors[0]).toMatchObject({ code: 'unsupported_document', source: { pointer: '/data/document/format' } });
    expect(single.body.errors[0].detail).toContain('import it with POST /workflows');
    expect(await rowCounts(t)).toEqual({ ...before, folders: before.folders! + 1 });
  });

  it('refuses a folder import without a document as an invalid request document, creating nothing', async () => {
    const before = await rowCounts(t);
    for (const body of [{ data: { name: 'Nothing in it' } }, { data: {} }]) {
      const res = await t.request('POST', '/api/v1/folders/import', { body });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ code: 'invalid_document', source: { pointer: '/data/document' } })]);
    }
    const bare = await t.request('POST', '/api/v1/folders/import', { body: {} });
    expect(bare.status).toBe(400);
    expect(bare.body.errors[0]).toMatchObject({ code: 'invalid_document', source: { pointer: '/data' } });
    expect(await rowCounts(t)).toEqual(before);
  });

  it("refuses a workflow import into an unknown folder and into another workspace's folder with the same answer, creating nothing", async () => {
    const document = (await t.request('GET', `/api/v1/workflows/${ids.tax}/export`)).body;
    const theirs = (await t.request('POST', '/api/v1/folders', { token: t.tokens.other, body: { data: { name: 'Theirs' } } })).body.data
      .id as string;
    const unknown = '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e';
    const before = await rowCounts(t);
    const flat = (folder: string) => t.request('POST', '/api/v1/workflows', { body: { data: { document, folder_id: folder } } });
    const related = (folder: string) =>
      t.request('POST', '/api/v1/workflows', {
        body: {
          data: {
            type: 'workflow',
            attributes: { document },
            relationships: { folder: { data: { type: 'workflow-folder', id: folder } } },
          },
        },
      });
    for (const [send, pointer] of [
      [flat, '/data/folder_id'],
      [related, '/data/relationships/folder/data'],
    ] as const) {
      const foreign = await send(theirs);
      const missing = await send(unknown);
      expect(foreign.status).toBe(422);
      expect(foreign.body.errors).toEqual([
        expect.objectContaining({ code: 'validation_failed', detail: 'folder_id names no folder of this workspace', source: { pointer } }),
      ]);
      const strip = (raw: string) => raw.replace(/"id":"[^"]+"/, '');
      expect(strip(foreign.raw)).toBe(strip(missing.raw));
      expect(foreign.raw).not.toContain(theirs);
    }
    expect(await rowCounts(t)).toEqual(before);
    // The folder of this workspace is taken.
    const filed = await t.request('POST', '/api/v1/workflows?fields[workflow]=folder_id', {
      body: { data: { document, folder_id: folderId } },
    });
    expect(filed.status).toBe(201);
    expect(filed.body.data.attributes.folder_id).toBe(folderId);
  });

  it("answers another workspace's folder like an unknown one", async () => {
    const foreign = await t.request('GET', `/api/v1/folders/${folderId}/export`, { token: t.tokens.other });
    const unknown = await t.request('GET', '/api/v1/folders/0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e/export', { token: t.tokens.other });
    expect(foreign.status).toBe(404);
    expect(foreign.raw.replace(/"id":"[^"]+"/, '')).toBe(unknown.raw.replace(/"id":"[^"]+"/, ''));
  });
});
