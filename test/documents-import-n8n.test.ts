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
      expect(graph.nodes.map((n) => [n.id, n.type])).toEqual([
        ['when_chat_message_received', 'placeholder'],
        ['ai_agent', 'agent'],
      ]);
      expect(graph.nodes[1]).toMatchObject({
        name: 'AI Agent',
        position: { x: -80, y: -40 },
        config: {
          model: 'gpt-4o-mini',
          prompt: '{{ input.chatInput }}',
          memory_id: '00000000-0000-0000-0000-000000000000',
          session_key: '{{ input.sessionId }}',
        },
      });
      expect(graph.nodes[1].config).not.toHaveProperty('provider');
      expect(meta.placeholders).toEqual([
        {
          node_id: 'when_chat_message_received',
          original: { name: 'When chat message received', type: '@n8n/n8n-nodes-langchain.chatTrigger', version: 1.1 },
          reason: expect.stringContaining('no Switchyard step'),
          pointer: '/nodes/0',
        },
      ]);
      expect(meta.requirements.credentials).toEqual([
        expect.objectContaining({
          pointer: '/nodes/1/config/connection_id',
          provider: 'openai',
          credential_type: 'openAiApi',
          credential_name: 'OpenAi account 37',
        }),
      ]);
      expect(meta.requirements.bindings).toEqual([
        expect.objectContaining({ pointer: '/nodes/1/config/memory_id', resource: 'memory', window: 5 }),
      ]);
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
      expect(graph.edges.map((e) => `${e.source}.${e.source_port}->${e.target}`)).toEqual([
        'when_clicking_execute_workflow.out->code',
        'code.out->loop_over_items',
        'loop_over_items.body->rss_read',
      ]);
    });

    it('reads both template shapes and the template copy with meta first', async () => {
      const view = await importOk(t, n8nFixture('n8n-repo-template-import.json'));
      expect(view.meta.source).toEqual({ format: 'n8n', shape: 'template', n8n_id: '60' });
      expect(view.attributes.name).toBe('test1 test1');
      // The old Start node is n8n's one empty item, as the Manual Trigger.
      expect(view.graph).toEqual({
        nodes: [{ id: 'start', type: 'set', name: 'Start', config: { values: {} }, position: { x: 250, y: 300 } }],
        edges: [],
      });
      expect(view.meta.placeholders).toEqual([]);
      expect(view.meta.requirements).toEqual({ credentials: [], secrets: [], bindings: [], expressions: [], provider_keys: [] });
      const api = await importOk(t, n8nFixture('n8n-repo-template-api.json'));
      expect(api.meta.source.shape).toBe('template_api');
      expect(api.attributes.name).toBe('Promote new Shopify products on Twitter and Telegram');
      expect(api.meta.placeholders.map((p: { original: { type: string } }) => p.original.type)).toEqual([
        'n8n-nodes-base.twitter',
        'n8n-nodes-base.telegram',
        'n8n-nodes-base.shopifyTrigger',
      ]);
      expect(api.graph.nodes.map((n) => [n.id, n.type, n.position])).toEqual([
        ['twitter', 'placeholder', { x: 720, y: -220 }],
        ['telegram', 'placeholder', { x: 720, y: -20 }],
        ['product_created', 'placeholder', { x: 540, y: -110 }],
      ]);
      expect(api.graph.edges.map((e) => `${e.source}.${e.source_port}->${e.target}`)).toEqual([
        'product_created.out->twitter',
        'product_created.out->telegram',
      ]);
      expect(api.graph.nodes[2].config.original.parameters).toEqual({ topic: 'products/create' });
      // Credentials in the old string form are named, never carried.
      expect(api.meta.requirements.credentials.map((c: { credential_name: string }) => c.credential_name)).toEqual([
        'twitter',
        'telegram_habot',
        'shopify_nodeqa',
      ]);
      expect(api.graph.nodes[0].config.original.credentials).toEqual({ twitterOAuth1Api: 'twitter' });
      const copied = await importOk(t, n8nFixture('n8n-repo-execute-workflow-template.json'));
      expect(copied.meta.source.shape).toBe('template');
    });

    it("reads a public-API object, mapping its switch outputs and dropping the loop's back edge", async () => {
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
      // This CLI output carries the editor's members only (no createdAt), so its shape, which is informational, reads as an editor download.
      expect(single.meta.source).toEqual({ format: 'n8n', shape: 'editor', n8n_id: '998' });
      expect(single.attributes).toMatchObject({ name: 'active-workflow', status: 'inactive' });
      expect(single.graph.nodes.map((n) => n.type)).toEqual(['webhook', 'set', 'respond_to_webhook']);
      expect(single.graph.nodes.map((n) => n.config)).toEqual([
        expect.objectContaining({ response_mode: 'respond_step', verification: { method: 'bearer' } }),
        // Set 1 keeps the input's fields and adds the boolean.
        { values: '{{ $merge([input, {"hooked": true}]) }}' },
        { status: 200, body: '{{ input[0] }}', headers: {} },
      ]);
      expect(single.graph.edges.map((e) => `${e.source}.${e.source_port}->${e.target}`)).toEqual([
        'webhook.out->set',
        'set.out->respond_to_webhook',
      ]);
      expect(single.meta.requirements.secrets).toEqual([
        expect.objectContaining({
          pointer: '/nodes/0/config/verification',
          original_path: 'e20b4873-fcf7-4bce-88fc-a1a56d66b138',
          original_authentication: 'none',
        }),
      ]);
      // n8n answers the request item with "hooked": true added; so does the import, once activated.
      expect((await t.request('POST', `/api/v1/workflows/${single.id}/activate`)).status).toBe(200);
      const answer = await deliver(t, `/webhooks/${single.graph.nodes[0].config.webhook_id}`, {
        body: JSON.stringify({ order: 7 }),
        headers: { authorization: `Bearer ${single.meta.webhook_tokens.webhook}` },
      });
      expect(answer.status).toBe(200);
      expect(answer.json()).toMatchObject({ body: { order: 7 }, hooked: true });
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
      expect(graph.nodes.map((n) => [n.id, n.type])).toEqual([
        ['activecampaign', 'placeholder'],
        ['error-2d94cea0', 'code'],
      ]);
      expect(graph.nodes[0].config.original.notes).toContain('activeCampaignTrigger');
      expect(graph.nodes[1].config.code).toBe('throw new NonRetriableError("工作流执行错误");');
    });
  });

  describe('mapped graphs', () => {
    it('maps Switch 3 rules to one case per rule, ports named after the renamed outputs, the fallback output also taking the default, and routes as n8n did', async () => {
      const document = n8nFixture('n8n-repo-switch-v3-rules.json');
      const { id, graph, meta } = await importOk(t, document);
      const byId = Object.fromEntries(graph.nodes.map((n) => [n.id, n]));
      expect(byId.switch1).toMatchObject({
        type: 'switch',
        name: 'Switch1',
        position: { x: -120, y: 620 },
        config: {
          value: true,
          cases: [
            { port: 'first_output', equals: '{{ (input.output = "first") }}' },
            { port: 'second_output', equals: '{{ (input.output = "second") }}' },
            { port: 'third_output', equals: '{{ (input.output = "third") }}' },
          ],
        },
      });
      expect(graph.edges.filter((e) => e.source === 'switch1').map((e) => [e.source_port, e.target])).toEqual([
        ['first_output', 'no_operation_do_nothing'],
        ['second_output', 'no_operation_do_nothing1'],
        ['third_output', 'no_operation_do_nothing2'],
        // "fallbackOutput": 2 sends what no rule matched to output 2 as well.
        ['default', 'no_operation_do_nothing2'],
      ]);
      expect(meta.requirements).toEqual({ credentials: [], secrets: [], bindings: [], expressions: [], provider_keys: [] });
      expect(meta.placeholders.map((p: { node_id: string }) => p.node_id)).toEqual(['code']);

      // n8n routed each test item (pinned on the no-ops); with the test-data node replaced by a
      // set step emitting one item at a time, each reaches the same no-op here.
      const items = document.nodes.find((n: { name: string }) => n.name === 'Code').parameters.data as Array<Record<string, string>>;
      for (const item of items) {
        const runnable = structuredClone(graph);
        runnable.nodes[graph.nodes.findIndex((n) => n.id === 'code')] = {
          id: 'code',
          type: 'set',
          name: 'Code',
          config: { values: item },
          position: { x: -340, y: 620 },
        };
        expect(
          (await t.request('PUT', `/api/v1/workflows/${id}/graph`, { body: { data: { graph: runnable, layout: false } } })).status,
        ).toBe(200);
        const reached = (await stepRows(t, await runToRest(t, id))).filter(
          (s) => s.node_id.startsWith('no_operation') && s.status === 'completed',
        );
        const expected = Object.entries(document.pinData as Record<string, Array<{ json: unknown }>>).find(([, pinnedItems]) =>
          pinnedItems.some((p) => JSON.stringify(p.json) === JSON.stringify(item)),
        )![0];
        expect(reached.map((s) => [s.node_id, s.output])).toEqual([[graph.nodes.find((n) => n.name === expected)!.id, item]]);
      }
    });

    it('maps "continue (using error output)" to on_error continue, n8n\'s error output leaving through the error port', async () => {
      const { id, graph, meta } = await importOk(t, n8nFixture('n8n-repo-http-error-output.json'));
      expect(graph.nodes.map((n) => [n.id, n.type])).toEqual([
        ['when_clicking_execute_workflow', 'set'],
        ['success_path', 'code'],
        ['error_path', 'code'],
        ['http_request', 'http'],
      ]);
      expect(graph.nodes[3]).toMatchObject({
        on_error: 'continue',
        config: { method: 'POST', url: 'https://webhook.site/e18fe8f9-ec77-4574-a40d-8ae054191e1e', body: '{\n  "q": "abc",\n}' },
      });
      expect(graph.edges.map((e) => `${e.source}.${e.source_port}->${e.target}`)).toEqual([
        'when_clicking_execute_workflow.out->http_request',
        'http_request.out->success_path',
        'http_request.error->error_path',
      ]);
      // n8n refused the body at run time; here it is sent as text, and the reviewer is told.
      expect(meta.requirements.expressions).toEqual([
        expect.objectContaining({ pointer: '/nodes/3/config/body', original: '{\n  "q": "abc",\n}' }),
      ]);
      expect(meta.placeholders).toEqual([]);

      // A request that fails takes the error port, as n8n's failed request took its error output.
      const failing = structuredClone(graph);
      failing.nodes[3].config.url = 'http://127.0.0.1:9/unreachable';
      failing.nodes[3].retry = { max_attempts: 1, backoff_ms: 0, backoff: 'fixed' };
      expect((await t.request('PUT', `/api/v1/workflows/${id}/graph`, { body: { data: { graph: failing, layout: false } } })).status).toBe(
        200,
      );
      const executionId = await runToRest(t, id);
      expect((await executionRow(t, executionId)).status).toBe('completed');
      const statuses = Object.fromEntries((await stepRows(t, executionId)).map((s) => [s.node_id, s.status]));
      expect(statuses).toMatchObject({ http_request: 'failed', error_path: 'completed' });
      expect(statuses.success_path ?? 'skipped').toBe('skipped');
    });

    it("folds an agent's ai_tool into a workflow tool bound to this workflow ($workflow.id), with its memory and model; the LLM chain's output parsers stay placeholders", async () => {
      const { id, graph, meta } = await importOk(t, n8nFixture('docs-let-your-ai-call-an-api.json'));
      const byId = Object.fromEntries(graph.nodes.map((n) => [n.id, n]));
      expect(graph.nodes.map((n) => [n.id, n.type])).toEqual([
        ['execute_workflow_trigger', 'code'],
        ['chat_trigger', 'placeholder'],
        ['ai_agent', 'agent'],
        ['auto_fixing_output_parser', 'placeholder'],
        ['gpt4_model_3', 'placeholder'],
        ['structure_as_json', 'placeholder'],
        ['call_the_api', 'http'],
        ['work_out_activity_type_and_number_of_people', 'agent'],
        ['set_response_value', 'set'],
      ]);
      expect(byId.ai_agent.config).toMatchObject({
        prompt: '{{ input.chatInput }}',
        model: 'gpt-4',
        max_turns: 10,
        connection_id: null,
        memory_id: '00000000-0000-0000-0000-000000000000',
        session_key: '{{ input.sessionId }}',
        tools: [
          {
            type: 'workflow',
            name: 'activity_tool',
            description: 'Suggest an activity for a person to do. Use this tool if someone is bored, or asking for ideas of things to do.',
            workflow_id: id,
          },
        ],
      });
      expect(byId.work_out_activity_type_and_number_of_people.config).toMatchObject({
        prompt: '{{ nodes.execute_workflow_trigger.chatInput }}',
        model: 'gpt-4',
        tools: [],
        memory_id: null,
      });
      // $json after the chain reads its output (`text`), after the request its body.
      expect(byId.call_the_api.config.query).toEqual({ type: '{{ input.text.type.data }}', participants: '{{ input.text.participants }}' });
      expect(byId.set_response_value.config).toEqual({ values: { response: '{{ input.body.activity }}' } });
      expect(graph.edges.map((e) => `${e.source}.${e.source_port}->${e.target}`)).toEqual([
        'chat_trigger.out->ai_agent',
        'execute_workflow_trigger.out->work_out_activity_type_and_number_of_people',
        'call_the_api.out->set_response_value',
        'work_out_activity_type_and_number_of_people.out->call_the_api',
      ]);
      expect(graph.annotations?.map((a) => a.id)).toHaveLength(8);
      const sourceOf = (name: string) => meta.source_nodes.find((s: { name: string }) => s.name === name);
      expect(sourceOf('Activity tool')).toEqual({
        name: 'Activity tool',
        type: '@n8n/n8n-nodes-langchain.toolWorkflow',
        became: 'sub_node',
        id: 'ai_agent',
      });
      expect(sourceOf('GPT4 Model 2')).toMatchObject({ became: 'sub_node', id: 'work_out_activity_type_and_number_of_people' });
      expect(meta.placeholders.map((p: { node_id: string; reason: string }) => [p.node_id, p.reason])).toEqual([
        ['chat_trigger', 'n8n node type "@n8n/n8n-nodes-langchain.chatTrigger" has no Switchyard step'],
        ['auto_fixing_output_parser', 'the outputParserAutofixing sub-node has no place in a Switchyard step'],
        ['gpt4_model_3', 'the lmChatOpenAi sub-node has no place in a Switchyard step'],
        ['structure_as_json', 'the outputParserStructured sub-node has no place in a Switchyard step'],
      ]);
      // The tool calls this workflow itself: bound, not a requirement; the memory is to choose.
      expect(meta.requirements.bindings).toEqual([
        expect.objectContaining({ pointer: '/nodes/2/config/memory_id', resource: 'memory', window: 5 }),
      ]);
      expect(meta.requirements.credentials.map((c: { pointer: string; provider: string }) => [c.pointer, c.provider])).toEqual([
        ['/nodes/2/config/connection_id', 'openai'],
        ['/nodes/7/config/connection_id', 'openai'],
      ]);
      // n8n also handed the tool's workflow a chatInput field; the model's arguments do not carry it.
      expect(meta.requirements.expressions).toEqual([
        expect.objectContaining({ pointer: '/nodes/2/config/tools/0', fields: ['chatInput'] }),
      ]);
    });

    it('keeps an unknown node as a placeholder with its original parameters, credentials by name and position, its outputs as ports', async () => {
      const document = {
        name: 'Unknown node',
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
          {
            name: 'Sheet',
            type: 'n8n-nodes-base.googleSheets',
            typeVersion: 4.5,
            position: [320, -40],
            parameters: {
              operation: 'append',
              documentId: { __rl: true, value: 'sheet-1', mode: 'list' },
              columns: { mappingMode: 'autoMapInputData' },
            },
            credentials: { googleSheetsOAuth2Api: { id: 'cred-9', name: 'Sheets' } },
            notes: 'appends every order',
          },
          { name: 'Then', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [640, -40], parameters: {} },
          { name: 'Else', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [640, 120], parameters: {} },
        ],
        connections: {
          Start: { main: [[{ node: 'Sheet', type: 'main', index: 0 }]] },
          Sheet: { main: [[{ node: 'Then', type: 'main', index: 0 }], [{ node: 'Else', type: 'main', index: 0 }]] },
        },
      };
      const { graph, meta } = await importOk(t, document);
      expect(graph.nodes[1]).toEqual({
        id: 'sheet',
        type: 'placeholder',
        name: 'Sheet',
        position: { x: 320, y: -40 },
        config: {
          original: {
            type: 'n8n-nodes-base.googleSheets',
            version: 4.5,
            name: 'Sheet',
            parameters: document.nodes[1]!.parameters,
            credentials: { googleSheetsOAuth2Api: 'Sheets' },
            notes: 'appends every order',
          },
          reason: 'n8n node type "n8n-nodes-base.googleSheets" has no Switchyard step',
          outputs: 2,
        },
      });
      expect(JSON.stringify(graph)).not.toContain('cred-9');
      expect(graph.edges.filter((e) => e.source === 'sheet').map((e) => [e.source_port, e.target])).toEqual([
        ['out', 'then'],
        ['output_1', 'else'],
      ]);
      expect(meta.placeholders).toEqual([
        {
          node_id: 'sheet',
          original: { name: 'Sheet', type: 'n8n-nodes-base.googleSheets', version: 4.5 },
          reason: 'n8n node type "n8n-nodes-base.googleSheets" has no Switchyard step',
          pointer: '/nodes/1',
        },
      ]);
      expect(meta.requirements.credentials).toEqual([
        expect.objectContaining({ pointer: '/nodes/1', credential_type: 'googleSheetsOAuth2Api', credential_name: 'Sheets' }),
      ]);
    });
  });

  describe('running what was imported', () => {
    it("runs n8n Code in both modes and legacy syntax through the prelude, giving n8n's pinned results", async () => {
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
      const runnable = {
        ...graph,
        nodes: graph.nodes.filter((n) => n.id !== 'set_to_array'),
        edges: graph.edges.filter((e) => e.target !== 'set_to_array'),
      };
      const created = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Set v1 runnable' } } });
      expect(
        (await t.request('PUT', `/api/v1/workflows/${created.body.data.id}/graph`, { body: { data: { graph: runnable, layout: false } } }))
          .status,
      ).toBe(200);
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
          {
            parameters: { httpMethod: 'POST', path: 'greet', responseMode: 'responseNode', options: {} },
            name: 'Webhook',
            type: 'n8n-nodes-base.webhook',
            typeVersion: 2,
            position: [0, 0],
            webhookId: 'greet',
          },
          {
            parameters: {
              jsCode: "const name = $json.body.name;\nreturn [{ json: { greeting: 'Hello ' + name, items: $input.all().length } }];",
            },
            name: 'Code',
            type: 'n8n-nodes-base.code',
            typeVersion: 2,
            position: [200, 0],
          },
          {
            parameters: { options: {} },
            name: 'Respond to Webhook',
            type: 'n8n-nodes-base.respondToWebhook',
            typeVersion: 1.1,
            position: [400, 0],
          },
        ],
        connections: {
          Webhook: { main: [[{ node: 'Code', type: 'main', index: 0 }]] },
          Code: { main: [[{ node: 'Respond to Webhook', type: 'main', index: 0 }]] },
        },
        settings: { executionOrder: 'v1' },
      };
      const { id, graph, meta } = await importOk(t, document);
      expect(graph.nodes[0].config).toMatchObject({
        response_mode: 'respond_step',
        verification: { method: 'bearer' },
        webhook_url: expect.stringMatching(/^http:\/\/sy\.test\/webhooks\//),
      });
      expect(meta.requirements.secrets).toEqual([
        expect.objectContaining({ pointer: '/nodes/0/config/verification', original_path: 'greet' }),
      ]);
      expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
      const path = `/webhooks/${graph.nodes[0].config.webhook_id}`;
      expect((await deliver(t, path, { body: JSON.stringify({ name: 'Ada' }) })).status).toBe(401);
      const answer = await deliver(t, path, {
        body: JSON.stringify({ name: 'Ada' }),
        headers: { authorization: `Bearer ${meta.webhook_tokens.webhook}` },
      });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.body).toBe('{"greeting":"Hello Ada","items":1}');
    });

    it('answers a delivery to an imported "last node" webhook with the last node\'s item, as n8n does', async () => {
      const { id, graph, meta } = await importOk(t, n8nFixture('n8n-repo-webhook-last-node.json'));
      expect(graph.nodes.find((n) => n.id === 'webhook').config.response_mode).toBe('last_step');
      expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
      const answer = await deliver(t, `/webhooks/${graph.nodes.find((n) => n.id === 'webhook').config.webhook_id}`, {
        body: '{}',
        headers: { authorization: `Bearer ${meta.webhook_tokens.webhook}` },
      });
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ nodeData: 'pin' });
    });

    it('refuses to activate or draft-run while placeholders remain, pointing at each', async () => {
      const { id, graph, meta } = await importOk(t, n8nFixture('docs-course-level-one-finished.json'));
      expect(meta.placeholders.map((p: { pointer: string }) => p.pointer)).toEqual(['/nodes/1', '/nodes/5']);
      const byId = Object.fromEntries(graph.nodes.map((n) => [n.id, n]));
      // IF passes the HTTP item on unchanged, so what follows it reads the response body too.
      expect(byId.if.config).toEqual({ condition: '{{ (input.body.orderStatus = "processing") }}' });
      // Set 3.4 assignments: one value per assignment, the other fields of the input left out.
      expect(byId.edit_fields).toMatchObject({
        type: 'set',
        position: { x: 660, y: -140 },
        config: { values: { orderID: '{{ input.body.orderID }}', employeeName: '{{ input.body.employeeName }}' } },
      });
      expect(byId.code.config.code).toContain('const raw = (input == null ? input : input.body);');
      expect(graph.edges.map((e) => `${e.source}.${e.source_port}->${e.target}`)).toEqual([
        'http_request.out->if',
        'if.true->edit_fields',
        'if.false->code',
        'edit_fields.out->airtable',
        'code.out->discord',
        'schedule_trigger.out->http_request',
      ]);
      for (const res of [
        await t.request('POST', `/api/v1/workflows/${id}/activate`),
        await t.request('POST', `/api/v1/workflows/${id}/run`, { body: { data: { draft: true } } }),
      ]) {
        expect(res.status).toBe(422);
        expect(
          res.body.errors.map((e: { code: string; source: { pointer: string }; meta: { pointer: string } }) => [
            e.code,
            e.source.pointer,
            e.meta.pointer,
          ]),
        ).toEqual([
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

      const child = await importOk(t, {
        id: 'ChildN8n',
        name: 'Child',
        nodes: [{ name: 'In', type: 'n8n-nodes-base.executeWorkflowTrigger', typeVersion: 1, parameters: {}, position: [0, 0] }],
        connections: {},
      });
      const parentDoc = {
        name: 'Parent',
        nodes: [
          {
            name: 'Call',
            type: 'n8n-nodes-base.executeWorkflow',
            typeVersion: 1.1,
            position: [0, 0],
            parameters: { workflowId: { __rl: true, value: 'ChildN8n', mode: 'list' } },
          },
          {
            name: 'Other',
            type: 'n8n-nodes-base.executeWorkflow',
            typeVersion: 1,
            position: [0, 0],
            parameters: { workflowId: 'Missing' },
          },
        ],
        connections: {},
      };
      const parent = await importOk(t, parentDoc);
      expect(parent.graph.nodes[0].config.workflow_id).toBe(child.id);
      expect(parent.graph.nodes[1].config.workflow_id).toBe('00000000-0000-0000-0000-000000000000');
      expect(parent.meta.requirements.bindings).toEqual([
        expect.objectContaining({
          pointer: '/nodes/1/config/workflow_id',
          resource: 'workflow',
          export_key: 'n8n-Missing',
          n8n_workflow_id: 'Missing',
        }),
      ]);
      const calls = await t.request('GET', `/api/v1/workflows/${child.id}/calls`);
      expect(calls.body).toEqual({ callers: [{ id: parent.id, name: 'Parent', active: false }], callees: [] });
    });
  });

  describe('what is never imported', () => {
    it('takes no secret from a document: literal keys, credentials and HMAC secrets are dropped and listed', async () => {
      // n8n: literal keys in an HTTP request, a webhook checking a header credential, an HTTP
      // request through a predefined credential. n8n exports carry credential ids and names.
      const document = {
        name: 'Secrets',
        nodes: [
          {
            name: 'Call',
            type: 'n8n-nodes-base.httpRequest',
            typeVersion: 4.2,
            position: [0, 0],
            parameters: {
              url: 'https://api.test',
              sendHeaders: true,
              headerParameters: { parameters: [{ name: 'x-api-key', value: 'live_abc123' }] },
              sendQuery: true,
              queryParameters: { parameters: [{ name: 'api_key', value: 'q_secret' }] },
            },
          },
          {
            name: 'Hook',
            type: 'n8n-nodes-base.webhook',
            typeVersion: 2,
            position: [0, 200],
            webhookId: 'hook-path',
            parameters: { path: 'orders', httpMethod: 'POST', authentication: 'headerAuth', options: {} },
            credentials: { httpHeaderAuth: { id: 'cred-hdr-77', name: 'Partner header' } },
          },
          {
            name: 'Charge',
            type: 'n8n-nodes-base.httpRequest',
            typeVersion: 4.2,
            position: [200, 200],
            parameters: {
              url: 'https://api.stripe.test/v1/charges',
              authentication: 'predefinedCredentialType',
              nodeCredentialType: 'stripeApi',
              options: {},
            },
            credentials: { stripeApi: { id: 'cred-stripe-88', name: 'Stripe live' } },
          },
        ],
        connections: { Hook: { main: [[{ node: 'Charge', type: 'main', index: 0 }]] } },
      };
      const { id, graph, meta } = await importOk(t, document);
      const stored = (await t.deps.db.selectFrom('workflows').select('graph').where('id', '=', id).executeTakeFirstOrThrow()).graph;
      for (const text of [JSON.stringify(graph), stored]) expect(text).not.toMatch(/live_abc123|q_secret|cred-hdr-77|cred-stripe-88/);
      expect(meta.requirements.provider_keys.map((r: { pointer: string }) => r.pointer)).toEqual([
        '/nodes/0/config/headers/x-api-key',
        '/nodes/0/config/query/api_key',
      ]);
      expect(meta.requirements.credentials).toEqual([
        expect.objectContaining({
          pointer: '/nodes/1/config/verification',
          credential_type: 'httpHeaderAuth',
          credential_name: 'Partner header',
        }),
        expect.objectContaining({ pointer: '/nodes/2/config/headers', authentication: 'stripeApi' }),
        expect.objectContaining({ pointer: '/nodes/2/config/headers', credential_type: 'stripeApi', credential_name: 'Stripe live' }),
      ]);
      expect(meta.requirements.secrets).toEqual([
        expect.objectContaining({
          pointer: '/nodes/1/config/verification',
          original_path: 'orders',
          original_authentication: 'headerAuth',
        }),
      ]);
      // The webhook gets a bearer token of its own, never the n8n credential.
      expect(graph.nodes[1].config.verification).toEqual({ method: 'bearer' });

      // Ours: a service/v1 document (and a bare graph) carrying an HMAC secret in a webhook node.
      const signedGraph = {
        nodes: [
          {
            id: 'hook',
            type: 'webhook',
            config: { verification: { method: 'hmac', format: 'github', secret: 'doc-carried-secret' } },
            position: { x: 0, y: 0 },
          },
          { id: 'done', type: 'code', config: { code: 'return input;' }, position: { x: 200, y: 0 } },
        ],
        edges: [{ source: 'hook', target: 'done', source_port: 'out' }],
      };
      const service = { format: 'service/v1', export_key: 'signed-hook', name: 'Signed', graph: signedGraph, settings: {}, references: {} };
      for (const source of [service, signedGraph]) {
        const imported = await importOk(t, source);
        expect(imported.graph.nodes[0].config.verification).toEqual({ method: 'hmac', format: 'github' });
        expect(imported.meta.requirements.secrets).toEqual([
          {
            pointer: '/nodes/0/config/verification/secret',
            node_id: 'hook',
            detail: expect.stringContaining('the document carried one and it was dropped'),
          },
        ]);
        const row = await t.deps.db.selectFrom('workflows').select('graph').where('id', '=', imported.id).executeTakeFirstOrThrow();
        const hooks = await t.deps.db.selectFrom('webhooks').selectAll().where('workflow_id', '=', imported.id).execute();
        expect(hooks).toHaveLength(1);
        expect(JSON.stringify([row, hooks])).not.toContain('doc-carried-secret');
        // Activation refuses it until a secret is set here.
        expect((await t.request('POST', `/api/v1/workflows/${imported.id}/activate`)).body.errors[0]).toMatchObject({
          code: 'missing_secret',
          source: { pointer: '/data/attributes/graph/nodes/0/config/verification/secret' },
        });
      }
    });

    it('refuses an ambiguous document, pointing at it and naming the formats it accepts', async () => {
      const res = await importDocument(t, { nodes: [{ name: 'x', type: 'code' }], connections: {}, edges: [] });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'unsupported_document', source: { pointer: '/data/document' } });
      expect(res.body.errors[0].detail).toContain('accepts a "service/v1" export');
      // The body schema describes the formats; the service, not the framework, answers every other value, in either body form.
      for (const document of ['a text', 42, null, [1, 2]]) {
        const flat = await importDocument(t, document);
        const enveloped = await t.request('POST', '/api/v1/workflows', { body: { data: { type: 'workflow', attributes: { document } } } });
        expect([flat.status, flat.body.errors[0].code, flat.body.errors[0].source.pointer]).toEqual([
          422,
          'unsupported_document',
          '/data/document',
        ]);
        expect([enveloped.status, enveloped.body.errors[0].code, enveloped.body.errors[0].source.pointer]).toEqual([
          422,
          'unsupported_document',
          '/data/attributes/document',
        ]);
      }
      // A member of the wrong type is pointed at, not the whole document.
      for (const nodes of [{}, 'a', 3]) {
        const wrong = await importDocument(t, { nodes, connections: {} });
        expect([wrong.status, wrong.body.errors[0].code, wrong.body.errors[0].source.pointer]).toEqual([
          422,
          'unsupported_document',
          '/data/document/nodes',
        ]);
      }
      const absent = await importDocument(t, { connections: {} });
      expect(absent.body.errors[0].source.pointer).toBe('/data/document');
      const malformed = await importDocument(t, { format: 'service/v1', name: 5, graph: { nodes: [], edges: [] } });
      expect(malformed.status).toBe(422);
      expect(malformed.body.errors.map((e: { code: string; source: { pointer: string } }) => [e.code, e.source.pointer])).toEqual([
        ['invalid_import', '/data/document/name'],
      ]);
    });

    it('refuses a malformed n8n document with a pointer per problem and writes nothing (a connection to no node is dropped, not refused)', async () => {
      const before = await rowCounts(t);
      const res = await t.request('POST', '/api/v1/workflows', {
        body: {
          data: {
            type: 'workflow',
            attributes: { document: { nodes: [{ name: 'A' }, 'B'], connections: { A: { main: [[{ node: 'C' }]] } } } },
          },
        },
      });
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { code: string; source: { pointer: string } }) => [e.code, e.source.pointer])).toEqual([
        ['invalid_import', '/data/attributes/document/nodes/0/type'],
        ['invalid_import', '/data/attributes/document/nodes/1'],
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
