import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { edge, node, workflowWith } from './support/engine-helpers.js';
import { storeClient } from './support/store-helpers.js';
import { exportOf, importOk, rowCounts } from './support/document-helpers.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildProgram } from '../src/cli/program.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** A document without what differs between environments and moments. */
const portable = (document: Record<string, unknown>, keepKey = true) => {
  const { exported_at: _at, export_key: key, ...rest } = document;
  return keepKey ? { ...rest, export_key: key } : rest;
};

describeEachDialect('workflow export and service/v1 round trips', (dialect) => {
  let t: TestApp;
  let childId: string;
  let parentId: string;
  let storeId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    storeId = (await storeClient(t).create({ name: 'Orders', slug: 'orders' })).id;
    childId = await workflowWith(t, 'Child', { nodes: [node('start', 'code', { code: 'return trigger.body;' })], edges: [] });
    const graph = {
      nodes: [
        node('hook', 'webhook', {
          response_mode: 'respond_step',
          verification: { method: 'hmac', format: 'github', secret: 's3cret-value' },
        }),
        node('call', 'call_workflow', { workflow_id: childId, input: '{{ input.body }}' }),
        node('again', 'call_workflow', { workflow_id: childId }),
        node('save', 'save_to_store', { store_id: storeId, key: '{{ trigger.body.id }}', row: '{{ input }}' }),
        node('reply', 'respond_to_webhook', { body: '{{ nodes.call }}' }),
      ],
      edges: [edge('hook', 'call'), edge('call', 'again'), edge('again', 'save'), edge('save', 'reply')],
      settings: { concurrency_limit: 3 },
      annotations: [{ id: 'note', text: 'Saves orders', position: { x: 5, y: 6 } }],
    };
    parentId = await workflowWith(t, 'Parent', graph);
  });
  afterAll(() => t.close());

  it('exports a portable service/v1 document with no environment id, token or secret', async () => {
    const res = await t.request('GET', `/api/v1/workflows/${parentId}/export`);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const document = res.body;
    const child = await t.deps.db.selectFrom('workflows').select('export_key').where('id', '=', childId).executeTakeFirstOrThrow();
    expect(document).toMatchObject({
      format: 'service/v1',
      exported_at: expect.stringMatching(/^2026-11-01T00:00:00\.\d{6}Z$/),
      name: 'Parent',
      description: null,
      build_mode: 'advanced',
      settings: { concurrency_limit: 3 },
      references: {
        workflows: [
          { export_key: child.export_key, name: 'Child', pointers: ['/nodes/1/config/workflow_id', '/nodes/2/config/workflow_id'] },
        ],
        stores: [{ slug: 'orders', name: 'Orders', pointers: ['/nodes/3/config/store_id'] }],
        memories: [],
        knowledge_bases: [],
        installations: [],
      },
    });
    expect(document.graph.settings).toBeUndefined();
    expect(document.graph.annotations).toEqual([{ id: 'note', text: 'Saves orders', position: { x: 5, y: 6 } }]);
    expect(document.graph.nodes[0].config).toEqual({
      response_mode: 'respond_step',
      verification: { method: 'hmac', format: 'github' },
      timeout_ms: 30000,
      max_body_bytes: 1048576,
    });
    expect(document.graph.nodes[1].config.workflow_id).toBeNull();
    expect(document.graph.nodes[3].config.store_id).toBeNull();
    // The only UUID left is the export key, which is portable by design.
    const text = JSON.stringify(document);
    expect(text.match(UUID)?.filter((id) => id !== document.export_key && id !== child.export_key) ?? []).toEqual([]);
    expect(text).not.toContain('s3cret-value');
    expect(text).not.toContain('webhook_url');
  });

  it('round-trips in another workspace where the references exist: export -> import -> export is identical', async () => {
    const other = t.tokens.other;
    const first = await exportOf(t, parentId);
    await storeClient(t).create({ name: 'Orders', slug: 'orders' }, other);
    const childDoc = await exportOf(t, childId);
    const importedChild = await importOk(t, childDoc, {}, other);
    const imported = await importOk(t, first, {}, other);
    expect(imported.meta.requirements.bindings).toEqual([]);
    expect(imported.meta.requirements.secrets).toEqual([expect.objectContaining({ pointer: '/nodes/0/config/verification/secret' })]);
    expect(imported.graph.nodes[1].config.workflow_id).toBe(importedChild.id);
    expect(imported.attributes.status).toBe('inactive');
    const second = await exportOf(t, imported.id, other);
    expect(portable(second)).toEqual(portable(first));
  });

  it('round-trips in the same workspace apart from the export key (the original keeps it)', async () => {
    const first = await exportOf(t, parentId);
    const imported = await importOk(t, first);
    expect(imported.graph.nodes[3].config.store_id).toBe(storeId);
    expect(imported.graph.nodes[1].config.workflow_id).toBe(childId);
    const second = await exportOf(t, imported.id);
    expect(second.export_key).not.toBe(first.export_key);
    expect(portable(second, false)).toEqual(portable(first, false));
  });

  it('imports one document eight times at once: every import succeeds, one keeps the export key', async () => {
    const document = { ...(await exportOf(t, childId)), export_key: 'concurrent-key' };
    const imported = await Promise.all(Array.from({ length: 8 }, () => importOk(t, document)));
    const rows = await t.deps.db
      .selectFrom('workflows')
      .select(['id', 'export_key'])
      .where(
        'id',
        'in',
        imported.map((w) => w.id),
      )
      .execute();
    expect(rows).toHaveLength(8);
    expect(new Set(rows.map((row) => row.export_key)).size).toBe(8);
    expect(rows.filter((row) => row.export_key === 'concurrent-key')).toHaveLength(1);
    for (const w of imported) expect(w.meta.requirements.bindings).toEqual([]);
  });

  it("gives the imported webhook a new endpoint and token, never the source's", async () => {
    const source = await exportOf(t, childId);
    const hookDoc = { ...source, graph: { nodes: [node('hook', 'webhook', {}), node('done', 'code', {})], edges: [edge('hook', 'done')] } };
    const a = await importOk(t, hookDoc);
    const b = await importOk(t, hookDoc);
    expect(a.graph.nodes[0].config.webhook_id).not.toBe(b.graph.nodes[0].config.webhook_id);
    expect(a.meta.webhook_tokens.hook).toMatch(/^whk_/);
    expect(a.meta.webhook_tokens.hook).not.toBe(b.meta.webhook_tokens.hook);
  });

  it('binds what the workspace lacks to nothing and lists it, and activation refuses it with its pointer', async () => {
    const document = await exportOf(t, parentId);
    const imported = await importOk(
      t,
      {
        ...document,
        references: { ...document.references, stores: [{ slug: 'nowhere', name: 'Nowhere', pointers: ['/nodes/3/config/store_id'] }] },
      },
      {},
      t.tokens.other,
    );
    expect(imported.meta.requirements.bindings).toEqual([
      expect.objectContaining({ pointer: '/nodes/3/config/store_id', resource: 'store', slug: 'nowhere' }),
    ]);
    expect(imported.graph.nodes[3].config.store_id).toBe('00000000-0000-0000-0000-000000000000');
    const activate = await t.request('POST', `/api/v1/workflows/${imported.id}/activate`, { token: t.tokens.other });
    expect(activate.status).toBe(422);
    expect(activate.body.errors.map((e: { code: string; source: { pointer: string } }) => [e.code, e.source.pointer])).toEqual([
      ['unbound_reference', '/data/attributes/graph/nodes/3/config/store_id'],
    ]);
    expect(activate.body.errors[0].meta).toEqual({ node_id: 'save', pointer: '/nodes/3/config/store_id' });
  });

  it('refuses an HMAC webhook without a secret at activation until the secret is set', async () => {
    const document = await exportOf(t, parentId);
    const imported = await importOk(t, document);
    const refused = await t.request('POST', `/api/v1/workflows/${imported.id}/activate`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({
      code: 'missing_secret',
      source: { pointer: '/data/attributes/graph/nodes/0/config/verification/secret' },
    });
    const graph = structuredClone(imported.graph);
    graph.nodes[0].config.verification = { method: 'hmac', format: 'github', secret: 'new-secret' };
    expect((await t.request('PUT', `/api/v1/workflows/${imported.id}/graph`, { body: { data: { graph, layout: false } } })).status).toBe(
      200,
    );
    expect((await t.request('POST', `/api/v1/workflows/${imported.id}/activate`)).status).toBe(200);
  });

  it("clears an agent step's connection and names its memory, knowledge bases, stores and workflow tools portably", async () => {
    const create = async (path: string, type: string, attributes: Record<string, unknown>) =>
      (await t.request('POST', path, { body: { data: { type, attributes } } })).body.data.id as string;
    const connectionId = await create('/api/v1/connections', 'connection', {
      provider: 'openai_compatible',
      name: 'Local',
      base_url: 'http://127.0.0.1:9/v1',
      api_key: 'sk-export-test-000',
    });
    const memoryId = await create('/api/v1/memories', 'memory', { name: 'Chat' });
    const kbIds = [
      await create('/api/v1/knowledge-bases', 'knowledge-base', { name: 'Ops' }),
      await create('/api/v1/knowledge-bases', 'knowledge-base', { name: 'Sales' }),
    ];
    const id = await workflowWith(t, 'Assistant', {
      nodes: [
        node('ask', 'agent', {
          connection_id: connectionId,
          model: 'gpt-4o-mini',
          prompt: '{{ trigger.body.question }}',
          memory_id: memoryId,
          session_key: '{{ trigger.body.user }}',
          knowledge_base_ids: kbIds,
          store_ids: [storeId],
          tools: [{ type: 'workflow', name: 'tax', description: 'Computes the tax of an order', workflow_id: childId }],
        }),
      ],
      edges: [],
    });
    const document = await exportOf(t, id);
    const child = await t.deps.db.selectFrom('workflows').select('export_key').where('id', '=', childId).executeTakeFirstOrThrow();
    expect(document.graph.nodes[0].config).toMatchObject({
      connection_id: null,
      memory_id: null,
      session_key: '{{ trigger.body.user }}',
      knowledge_base_ids: [null, null],
      store_ids: [null],
      tools: [{ type: 'workflow', name: 'tax', description: 'Computes the tax of an order', workflow_id: null }],
    });
    expect(document.references).toEqual({
      workflows: [{ export_key: child.export_key, name: 'Child', pointers: ['/nodes/0/config/tools/0/workflow_id'] }],
      stores: [{ slug: 'orders', name: 'Orders', pointers: ['/nodes/0/config/store_ids/0'] }],
      // No portable name yet: listed by pointer, to be chosen again.
      memories: [{ pointers: ['/nodes/0/config/memory_id'] }],
      knowledge_bases: [{ pointers: ['/nodes/0/config/knowledge_base_ids/0'] }, { pointers: ['/nodes/0/config/knowledge_base_ids/1'] }],
      installations: [],
    });
    const text = JSON.stringify(document);
    for (const environmentId of [connectionId, memoryId, ...kbIds, storeId, childId]) expect(text).not.toContain(environmentId);
    expect(text).not.toContain('sk-export-test');

    // Imported here: the store and the tool's workflow bind by slug and export key; the memory,
    // the knowledge bases and the connection are left to choose.
    const imported = await importOk(t, document);
    expect(imported.graph.nodes[0].config).toMatchObject({
      connection_id: null,
      memory_id: '00000000-0000-0000-0000-000000000000',
      knowledge_base_ids: ['00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000'],
      store_ids: [storeId],
      tools: [expect.objectContaining({ workflow_id: childId })],
    });
    expect(imported.meta.requirements.credentials).toEqual([expect.objectContaining({ pointer: '/nodes/0/config/connection_id' })]);
    expect(imported.meta.requirements.bindings.map((b: { pointer: string; resource: string }) => [b.pointer, b.resource])).toEqual([
      ['/nodes/0/config/memory_id', 'memory'],
      ['/nodes/0/config/knowledge_base_ids/0', 'knowledge_base'],
      ['/nodes/0/config/knowledge_base_ids/1', 'knowledge_base'],
    ]);
  });

  it('names the installations its nodes need by provider (and a pinned account), never an installation id or credential, and an import lists those the workspace lacks', async () => {
    const installed = await t.deps.apps.install({
      provider: 'slack',
      workspace: { id: t.workspaces.main },
      accountId: 'T0MAIN',
      botUserId: 'U0BOT',
      botId: 'B0BOT',
      credentials: { bot_token: 'xoxb-main-secret' },
    });
    const id = await workflowWith(t, 'Chatty', {
      nodes: [
        node('slack_in', 'app_event', { channels: ['C0ORDERS'] }),
        node('reply', 'chat_reply', { channel: '{{ trigger.payload.channel }}', text: 'Got it', team_id: '{{ trigger.payload.team_id }}' }),
        node('announce', 'chat_reply', { channel: 'C0NEWS', text: 'An order', team_id: 'T0MAIN' }),
        node('text_in', 'sms', { numbers: ['+15550100'] }),
        node('mail_in', 'email', { recipients: ['support@example.com'] }),
      ],
      edges: [edge('slack_in', 'reply'), edge('reply', 'announce'), edge('text_in', 'announce'), edge('mail_in', 'announce')],
    });
    const document = await exportOf(t, id);
    expect(document.references.installations).toEqual([
      { providers: ['slack'], pointers: ['/nodes/0', '/nodes/1'] },
      { providers: ['slack'], account_id: 'T0MAIN', pointers: ['/nodes/2'] },
      { providers: ['twilio'], pointers: ['/nodes/3'] },
      { providers: ['mailgun', 'postmark'], pointers: ['/nodes/4'] },
    ]);
    // The configs travel as they are: they filter deliveries and name no installation of this workspace.
    expect(document.graph.nodes[2].config).toEqual({ channel: 'C0NEWS', text: 'An order', team_id: 'T0MAIN' });
    const text = JSON.stringify(document);
    expect(text).not.toContain(installed.id);
    expect(text).not.toContain('xoxb-main-secret');
    expect(text).not.toContain('U0BOT');

    // Here only Slack is installed: the SMS and email triggers are listed, each at its node.
    const here = await importOk(t, document);
    expect(here.meta.requirements.bindings).toEqual([
      expect.objectContaining({
        pointer: '/nodes/3',
        resource: 'installation',
        providers: ['twilio'],
        node_id: 'text_in',
        detail: expect.stringContaining('switchyard app install twilio'),
      }),
      expect.objectContaining({ pointer: '/nodes/4', resource: 'installation', providers: ['mailgun', 'postmark'], node_id: 'mail_in' }),
    ]);
    // Another workspace has another Slack team and a Postmark account: the node pinned to T0MAIN is listed.
    const other = t.tokens.other;
    await t.deps.apps.install({
      provider: 'slack',
      workspace: { id: t.workspaces.other },
      accountId: 'T0OTHER',
      botUserId: 'U0B2',
      botId: 'B0B2',
      credentials: { bot_token: 'xoxb-other' },
    });
    await t.deps.apps.install({
      provider: 'postmark',
      workspace: { id: t.workspaces.other },
      accountId: 'example.com',
      credentials: { basic_user: 'u', basic_password: 'p' },
    });
    const there = await importOk(t, document, {}, other);
    expect(there.meta.requirements.bindings).toEqual([
      expect.objectContaining({
        pointer: '/nodes/2',
        resource: 'installation',
        providers: ['slack'],
        account_id: 'T0MAIN',
        detail: expect.stringContaining('Slack installation for account T0MAIN'),
      }),
      expect.objectContaining({ pointer: '/nodes/3', resource: 'installation', providers: ['twilio'] }),
    ]);
    expect(there.graph.nodes.map((n) => n.config)).toEqual(here.graph.nodes.map((n) => n.config));
    expect(portable(await exportOf(t, there.id, other))).toEqual(portable(document));
  });

  it('refuses installation references that misdescribe the graph, with pointers, and still lists what the nodes need', async () => {
    const id = await workflowWith(t, 'Texting', {
      nodes: [node('text_in', 'sms', {}), node('done', 'code', { code: 'return input;' })],
      edges: [edge('text_in', 'done')],
    });
    const document = await exportOf(t, id);
    const refused = await t.request('POST', '/api/v1/workflows', {
      body: {
        data: {
          document: {
            ...document,
            references: {
              ...document.references,
              installations: [{ providers: ['slack'], pointers: ['/nodes/0', '/nodes/1'] }, { pointers: [] }],
            },
          },
        },
      },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: { code: string; source: { pointer: string } }) => [e.code, e.source.pointer])).toEqual([
      ['invalid_import', '/data/document/references/installations/0/pointers/0'],
      ['invalid_import', '/data/document/references/installations/0/pointers/1'],
      ['invalid_import', '/data/document/references/installations/1/providers'],
    ]);
    const omitted = await importOk(t, { ...document, references: { ...document.references, installations: [] } });
    expect(omitted.meta.requirements.bindings).toEqual([
      expect.objectContaining({ pointer: '/nodes/0', resource: 'installation', providers: ['twilio'] }),
    ]);
  });

  it("answers an unknown id and another workspace's id with the same 404", async () => {
    const foreign = await t.request('GET', `/api/v1/workflows/${parentId}/export`, { token: t.tokens.other });
    const unknown = await t.request('GET', '/api/v1/workflows/0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e/export', { token: t.tokens.other });
    expect(foreign.status).toBe(404);
    const strip = (raw: string) => raw.replace(/"id":"[^"]+"/, '');
    expect(strip(foreign.raw)).toBe(strip(unknown.raw));
  });

  it('refuses an invalid graph in a document with pointers into the document, writing nothing', async () => {
    const before = await rowCounts(t);
    const document = await exportOf(t, parentId);
    document.graph.nodes[4].type = 'teleport';
    document.graph.edges.push({ source: 'reply', target: 'ghost' });
    const res = await t.request('POST', '/api/v1/workflows', { body: { data: { document } } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { code: string; source: { pointer: string } }) => [e.code, e.source.pointer])).toEqual([
      ['unknown_step_type', '/data/document/graph/nodes/4/type'],
      ['dangling_edge', '/data/document/graph/edges/4/target'],
    ]);
    expect(await rowCounts(t)).toEqual(before);
  });

  it('is printed by switchyard workflow export as the route answers it', async () => {
    // The CLI opens the database itself: a file-backed SQLite database, or the test's PostgreSQL.
    const app = await createTestApp(dialect, { sqliteFile: true });
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-cli-export-'));
    try {
      const id = await workflowWith(app, 'Exported', {
        nodes: [node('hook', 'webhook'), node('shape', 'set', { values: { a: 1 } })],
        edges: [edge('hook', 'shape')],
      });
      const env =
        dialect === 'sqlite'
          ? { SWITCHYARD_DATA_DIR: path.dirname(app.database.url!) }
          : { SWITCHYARD_DATA_DIR: dataDir, DATABASE_URL: app.database.url! };
      const run = async (args: string[]) => {
        const lines: string[] = [];
        const program = buildProgram(
          env,
          (line) => lines.push(line),
          () => {},
        );
        program.exitOverride();
        await program.parseAsync(['node', 'switchyard', ...args]);
        return lines;
      };
      const printed = JSON.parse((await run(['workflow', 'export', '--workspace', 'main', '--id', id]))[0]!);
      const answered = (await app.request('GET', `/api/v1/workflows/${id}/export`)).body;
      expect(portable(printed)).toEqual(portable(answered));
      expect(printed.exported_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      await expect(run(['workflow', 'export', '--workspace', 'other', '--id', id])).rejects.toThrow(
        `workflow ${id} not found in workspace "other"`,
      );
      await expect(run(['workflow', 'export', '--workspace', 'nope', '--id', id])).rejects.toThrow('workspace "nope" not found');
    } finally {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
