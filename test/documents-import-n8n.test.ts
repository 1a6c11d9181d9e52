import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { executionRow, runToRest, stepRows } from './support/engine-helpers.js';
import { deliver } from './support/webhook-helpers.js';
import { importDocument, importOk, n8nFixture, rowCounts } from './support/document-helpers.js';

/** n8n's pinned items of a node as the one value a Switchyard step outputs (one item: its json; several: a list). */
function pinned(document: { pinData: Record<string, Array<{ json: unknown }>> }, name: string): unknown {
  const items = document.pinData[name]!.map((item) => item.json);
  return items.length === 1 ? items[0] : items;
}

describeEachDialect('n8n imports', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  describe('every shape', () => {
    it('reads an editor download with the AI agent and its sub-nodes folded into the agent step', async () => {
      const { graph, meta, attributes } = await importOk(t, n8nFixture('docs-ai-tutorial-editor-download.json'));
      expect(attributes).toMatchObject({ name: 'AI tutorial', status: 'inactive' });
      expect(meta.source).toEqual({ format: 'n8n', shape: 'editor', n8n_id: 'l05TkWXXYbOiuL4o' });
      expect(graph.nodes.map((n) => [n.id, n.type])).toEqual([['when_chat_message_received', 'placeholder'], ['ai_agent', 'agent']]);
      expect(graph.nodes[1]).toMatchObject({ name: 'AI Agent', position: { x: -80, y: -40 }, config: { model: 'gpt-4o-mini', prompt: '{{ input.chatInput }}', memory_id: '00000000-0000-0000-0000-000000000000', session_key: '{{ input.sessionId }}' } });
      expect(graph.nodes[1].config).not.toHaveProperty('provider');
      expect(meta.placeholders).toEqual([{ node_id: 'when_chat_message_received', original: { name: 'When chat message received', type: '@n8n/n8n-nodes-langchain.chatTrigger', version: 1.1 }, reason: expect.stringContaining('no Switchyard step'), pointer: '/nodes/0' }]);
      expect(meta.requirements.credentials).toEqual([expect.objectContaining({ pointer: '/nodes/1/config/connection_id', provider: 'openai', credential_type: 'openAiApi', credential_name: 'OpenAi account 37' })]);
      expect(meta.requirements.bindings).toEqual([expect.objectContaining({ pointer: '/nodes/1/config/memory_id', resource: 'memory', window: 5 })]);
      expect(meta.source_nodes.map((s: { name: string; became: string; id: string }) => [s.name, s.became, s.id])).toEqual([
        ['When chat message received', 'placeholder', 'when_chat_message_received'],
        ['AI Agent', 'step', 'ai_agent'],
        ['OpenAI Chat Model', 'sub_node', 'ai_agent'],
        ['Window Buffer Memory', 'sub_node', 'ai_agent'],
      ]);
    });

    it('reads a clipboard copy (no name) and turns Loop Over Items into a loop whose body ends where n8n looped back', async () => {
      const { graph, meta, attributes } = await importOk(t, n8nFixture('docs-loop-clipboard.json'), { name: 'From the clipboard' });
      expect(attributes.name).toBe('From the clipboard');
      expect(meta.source.shape).toBe('clipboard');
      expect(graph.nodes.map((n) => n.type)).toEqual(['set', 'code', 'loop', 'placeholder']);
      expect(graph.edges.map((e) => `${e.source}.${e.source_port}->${e.target}`)).toEqual(['when_clicking_execute_workflow.out->code', 'code.out->loop_over_items', 'loop_over_items.body->rss_read']);
    });

    it('reads both template shapes and the template copy with meta first', async () => {
      const view = await importOk(t, n8nFixture('n8n-repo-template-import.json'));
      expect(view.meta.source.shape).toBe('template');
      expect(view.attributes.name).toBe('test1 test1');
      const api = await importOk(t, n8nFixture('n8n-repo-template-api.json'));
      expect(api.meta.source.shape).toBe('template_api');
      expect(api.attributes.name).toBe('Promote new Shopify products on Twitter and Telegram');
      expect(api.meta.placeholders.map((p: { original: { type: string } }) => p.original.type)).toEqual(['n8n-nodes-base.twitter', 'n8n-nodes-base.telegram', 'n8n-nodes-base.shopifyTrigger']);
      // Credentials in the old string form are named, never carried.
      expect(api.meta.requirements.credentials.map((c: { credential_name: string }) => c.credential_name)).toEqual(['twitter', 'telegram_habot', 'shopify_nodeqa']);
      expect(api.graph.nodes[0].config.original.credentials).toEqual({ twitterOAuth1Api: 'twitter' });
      const copied = await importOk(t, n8nFixture('n8n-repo-execute-workflow-template.json'));
      expect(copied.meta.source.shape).toBe('template');
    });

    it('reads a public-API object, mapping its switch outputs and dropping the loop\'s back edge', async () => {
      const { graph, meta } = await importOk(t, n8nFixture('public-api-backup-to-github.json'));
      expect(meta.source.shape).toBe('public_api');
      const byId = Object.fromEntries(graph.nodes.map((n) => [n.id, n]));
      expect(byId.check_status.config.cases.slice(0, 3)).toEqual([
        { port: 'output_0', equals: '{{ (input.github_status = "same") }}' },
        { port: 'output_1', equals: '{{ (input.github_status = "different") }}' },
        { port: 'output_2', equals: '{{ (input.github_status = "new") }}' },
      ]);
      expect(byId.if_file_too_large.config.condition).toContain('$exists(input.error)');
      expect(graph.edges).not.toContainEqual(expect.objectContaining({ source: 'return', target: 'loop_over_items' }));
      expect(graph.annotations?.map((a) => a.id)).toEqual(['sticky_note', 'sticky_note1', 'sticky_note2']);
      expect(meta.placeholders.find((p: { node_id: string }) => p.node_id === 'schedule_trigger')).toBeUndefined();
      expect(byId.schedule_trigger).toMatchObject({ type: 'schedule', config: { cron: '33 1 * * *', timezone: 'UTC', catch_up: 'skip' } });
    });

    it('reads CLI export:workflow output: one object, or one workflow in a list, and refuses several with where to go', async () => {
      const single = await importOk(t, n8nFixture('n8n-repo-cli-export-single.json'));
      expect(single.graph.nodes.map((n) => n.type)).toEqual(['webhook', 'set', 'respond_to_webhook']);
      const listed = await importOk(t, [n8nFixture('n8n-repo-cli-export-single.json')]);
      expect(listed.graph.nodes.map((n) => n.type)).toEqual(['webhook', 'set', 'respond_to_webhook']);
      const before = await rowCounts(t);
      const res = await importDocument(t, n8nFixture('n8n-repo-cli-export-combined.json'));
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'unsupported_document', source: { pointer: '/data/document' } });
      expect(res.body.errors[0].detail).toContain('import them one at a time, or all together with POST /folders/import');
      expect(await rowCounts(t)).toEqual(before);
    });

    it('reads a community collection export with string tags and injected notes', async () => {
      const { graph, meta, attributes } = await importOk(t, n8nFixture('community-zie619-activecampaign.json'));
      expect(meta.source.shape).toBe('community');
      expect(attributes.description).toContain('自动化工作流');
      expect(graph.nodes.map((n) => [n.id, n.type])).toEqual([['activecampaign', 'placeholder'], ['error-2d94cea0', 'code']]);
      expect(graph.nodes[0].config.original.notes).toContain('activeCampaignTrigger');
      expect(graph.nodes[1].config.code).toBe('throw new NonRetriableError("工作流执行错误");');
    });
  });

  describe('running what was imported', () => {
    it('runs n8n Code in both modes and legacy syntax through the prelude, giving n8n\'s pinned results', async () => {
      const document = n8nFixture('n8n-repo-code-node.json');
      const { id, meta } = await importOk(t, document, { name: 'Code modes' });
      expect(meta.requirements.expressions).toEqual([]);
      const executionId = await runToRest(t, id);
      expect((await executionRow(t, executionId)).status).toBe('completed');
      const outputs = Object.fromEntries((await stepRows(t, executionId)).map((s) => [s.node_id, s.output]));
      expect(outputs.sample_data).toEqual([{ value: 1 }, { value: 2 }]);
      expect(outputs.run_once_for_all_items).toEqual(pinned(document, 'Run Once for All Items'));
      expect(outputs.run_once_for_all_items_legacy_syntax).toEqual(pinned(document, 'Run Once for All Items (Legacy Syntax)'));
      expect(outputs.run_once_for_each_item).toEqual(pinned(document, 'Run Once for Each Item'));
      expect(outputs.run_once_for_each_item_legacy_syntax).toEqual(pinned(document, 'Run Once for Each Item  (Legacy Syntax)'));
    });

    it('runs n8n Set version 1 as n8n did: merged into the input, dotted names nested, dot notation off', async () => {
      const document = n8nFixture('n8n-repo-set-v1.json');
      const { graph, meta } = await importOk(t, document, { name: 'Set v1' });
      // Setting array elements has no set-step form: that node stays a placeholder, so the rest runs as a draft without it.
      expect(meta.placeholders.map((p: { node_id: string }) => p.node_id)).toEqual(['set_to_array']);
      const runnable = { ...graph, nodes: graph.nodes.filter((n) => n.id !== 'set_to_array'), edges: graph.edges.filter((e) => e.target !== 'set_to_array') };
      const created = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Set v1 runnable' } } });
      expect((await t.request('PUT', `/api/v1/workflows/${created.body.data.id}/graph`, { body: { data: { graph: runnable, layout: false } } })).status).toBe(200);
      const outputs = Object.fromEntries((await stepRows(t, await runToRest(t, created.body.data.id))).map((s) => [s.node_id, s.output]));
      expect(outputs.set).toEqual(pinned(document, 'Set'));
      expect(outputs.set_keep_only_set).toEqual(pinned(document, 'Set Keep Only Set'));
      expect(outputs.set_to_object).toEqual(pinned(document, 'Set to Object'));
      expect(outputs.set_disable_dot_notation).toEqual(pinned(document, 'Set Disable Dot Notation'));
    });

    it('answers a real delivery to an imported webhook -> code -> respond workflow with the body n8n would send', async () => {
      // A minimal n8n document in the editor's download shape, written for this test: the
      // webhook answers through Respond to Webhook (first incoming item), the code reads the
      // request body through $json and $input. n8n answers {"greeting":"Hello Ada","items":1}.
      const document = {
        name: 'Greeter',
        nodes: [
          { parameters: { httpMethod: 'POST', path: 'greet', responseMode: 'responseNode', options: {} }, name: 'Webhook', type: 'n8n-nodes-base.webhook', typeVersion: 2, position: [0, 0], webhookId: 'greet' },
          { parameters: { jsCode: "const name = $json.body.name;\nreturn [{ json: { greeting: 'Hello ' + name, items: $input.all().length } }];" }, name: 'Code', type: 'n8n-nodes-base.code', typeVersion: 2, position: [200, 0] },
          { parameters: { options: {} }, name: 'Respond to Webhook', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1, position: [400, 0] },
        ],
        connections: { Webhook: { main: [[{ node: 'Code', type: 'main', index: 0 }]] }, Code: { main: [[{ node: 'Respond to Webhook', type: 'main', index: 0 }]] } },
        settings: { executionOrder: 'v1' },
      };
      const { id, graph, meta } = await importOk(t, document);
      expect(graph.nodes[0].config).toMatchObject({ response_mode: 'respond_step', verification: { method: 'bearer' }, webhook_url: expect.stringMatching(/^http:\/\/sy\.test\/webhooks\//) });
      expect(meta.requirements.secrets).toEqual([expect.objectContaining({ pointer: '/nodes/0/config/verification', original_path: 'greet' })]);
      expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
      const path = `/webhooks/${graph.nodes[0].config.webhook_id}`;
      expect((await deliver(t, path, { body: JSON.stringify({ name: 'Ada' }) })).status).toBe(401);
      const answer = await deliver(t, path, { body: JSON.stringify({ name: 'Ada' }), headers: { authorization: `Bearer ${meta.webhook_tokens.webhook}` } });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.body).toBe('{"greeting":"Hello Ada","items":1}');
    });

    it('answers a delivery to an imported "last node" webhook with the last node\'s item, as n8n does', async () => {
      const { id, graph, meta } = await importOk(t, n8nFixture('n8n-repo-webhook-last-node.json'));
      expect(graph.nodes.find((n) => n.id === 'webhook').config.response_mode).toBe('last_step');
      expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
      const answer = await deliver(t, `/webhooks/${graph.nodes.find((n) => n.id === 'webhook').config.webhook_id}`, { body: '{}', headers: { authorization: `Bearer ${meta.webhook_tokens.webhook}` } });
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ nodeData: 'pin' });
    });

    it('refuses to activate or draft-run while placeholders remain, pointing at each', async () => {
      const { id, meta } = await importOk(t, n8nFixture('docs-course-level-one-finished.json'));
      expect(meta.placeholders.map((p: { pointer: string }) => p.pointer)).toEqual(['/nodes/1', '/nodes/5']);
      for (const res of [await t.request('POST', `/api/v1/workflows/${id}/activate`), await t.request('POST', `/api/v1/workflows/${id}/run`, { body: { data: { draft: true } } })]) {
        expect(res.status).toBe(422);
        expect(res.body.errors.map((e: { code: string; source: { pointer: string }; meta: { pointer: string } }) => [e.code, e.source.pointer, e.meta.pointer])).toEqual([
          ['placeholder_node', '/data/attributes/graph/nodes/1', '/nodes/1'],
          ['placeholder_node', '/data/attributes/graph/nodes/5', '/nodes/5'],
        ]);
      }
    });
  });

  describe('calls between n8n workflows', () => {
    it('binds a workflow that calls itself, and calls to an n8n workflow imported before', async () => {
      const self = await importOk(t, n8nFixture('n8n-repo-execute-workflow-template.json'));
      const byId = Object.fromEntries(self.graph.nodes.map((n) => [n.id, n]));
      // The template has no n8n id; "$workflow.id" still means itself.
      expect(byId.once_for_all.config).toEqual({ workflow_id: self.id, input: '{{ input }}', wait: true });
      expect(byId.once_for_all_not_waiting.config.wait).toBe(false);
      expect(self.meta.requirements.bindings).toEqual([]);

      const child = await importOk(t, { id: 'ChildN8n', name: 'Child', nodes: [{ name: 'In', type: 'n8n-nodes-base.executeWorkflowTrigger', typeVersion: 1, parameters: {}, position: [0, 0] }], connections: {} });
      const parentDoc = { name: 'Parent', nodes: [{ name: 'Call', type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1.1, position: [0, 0], parameters: { workflowId: { __rl: true, value: 'ChildN8n', mode: 'list' } } }, { name: 'Other', type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1, position: [0, 0], parameters: { workflowId: 'Missing' } }], connections: {} };
      const parent = await importOk(t, parentDoc);
      expect(parent.graph.nodes[0].config.workflow_id).toBe(child.id);
      expect(parent.graph.nodes[1].config.workflow_id).toBe('00000000-0000-0000-0000-000000000000');
      expect(parent.meta.requirements.bindings).toEqual([expect.objectContaining({ pointer: '/nodes/1/config/workflow_id', resource: 'workflow', export_key: 'n8n-Missing', n8n_workflow_id: 'Missing' })]);
      const calls = await t.request('GET', `/api/v1/workflows/${child.id}/calls`);
      expect(calls.body).toEqual({ callers: [{ id: parent.id, name: 'Parent', active: false }], callees: [] });
    });
  });

  describe('what is never imported', () => {
    it('takes no secret from a document: literal keys, credentials and HMAC secrets are dropped and listed', async () => {
      const document = {
        name: 'Secrets',
        nodes: [{ name: 'Call', type: 'n8n-nodes-base.httpRequest', typeVersion: 4.2, position: [0, 0], parameters: { url: 'https://api.test', sendHeaders: true, headerParameters: { parameters: [{ name: 'x-api-key', value: 'live_abc123' }] }, sendQuery: true, queryParameters: { parameters: [{ name: 'api_key', value: 'q_secret' }] } } }],
        connections: {},
      };
      const { graph, meta } = await importOk(t, document);
      expect(JSON.stringify(graph)).not.toMatch(/live_abc123|q_secret/);
      expect(meta.requirements.provider_keys.map((r: { pointer: string }) => r.pointer)).toEqual(['/nodes/0/config/headers/x-api-key', '/nodes/0/config/query/api_key']);
    });

    it('refuses an ambiguous document, pointing at it and naming the formats it accepts', async () => {
      const res = await importDocument(t, { nodes: [{ name: 'x', type: 'code' }], connections: {}, edges: [] });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'unsupported_document', source: { pointer: '/data/document' } });
      expect(res.body.errors[0].detail).toContain('accepts a "service/v1" export');
    });

    it('refuses a malformed n8n document with a pointer per problem and writes nothing', async () => {
      const before = await rowCounts(t);
      const res = await t.request('POST', '/api/v1/workflows', { body: { data: { type: 'workflow', attributes: { document: { nodes: [{ name: 'A' }, 'B'], connections: { A: { main: [[{ node: 'C' }]] } } } } } } });
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { code: string; source: { pointer: string } }) => [e.code, e.source.pointer])).toEqual([
        ['invalid_import', '/data/attributes/document/nodes/0/type'],
        ['invalid_import', '/data/attributes/document/nodes/1'],
        ['invalid_import', '/data/attributes/document/connections/A/main/0/0/node'],
      ]);
      expect(await rowCounts(t)).toEqual(before);
    });

    it('needs a build token, and refuses other attributes beside the document', async () => {
      expect((await importDocument(t, n8nFixture('n8n-repo-template-import.json'), {}, t.tokens.read)).status).toBe(403);
      const res = await importDocument(t, n8nFixture('n8n-repo-template-import.json'), { build_mode: 'guided' });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe('/data/build_mode');
    });
  });
});
