import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { anthropicMessage, openAiCompletion, startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const GREET_SCHEMA = { type: 'object', required: ['name'], properties: { name: { type: 'string' } }, additionalProperties: false };

describeEachDialect('agent step', (dialect) => {
  let t: TestApp;
  let provider: FakeProvider;
  let openai: string;
  let anthropic: string;
  let greeter: string;
  let tools: http.Server;
  let toolBase: string;
  const toolHits: string[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    provider = await startFakeProvider();
    const connect = async (attributes: Record<string, unknown>) =>
      (await t.request('POST', '/api/v1/connections', { body: { data: { type: 'connection', attributes } } })).body.data.id as string;
    openai = await connect({
      provider: 'openai_compatible',
      name: 'Local',
      base_url: provider.openAiBase,
      api_key: 'sk-agent-test-key-000',
    });
    anthropic = await connect({ provider: 'anthropic', name: 'Claude', base_url: provider.origin, api_key: 'sk-agent-test-key-111' });
    // The callee of the workflow tool: greets the name it is called with.
    greeter = await workflowWith(t, 'Greeter', {
      nodes: [node('hook', 'webhook'), node('greet', 'set', { values: { greeting: "{{ 'Hello, ' & trigger.body.name }}" } })],
      edges: [edge('hook', 'greet')],
    });
    tools = http.createServer((req, res) => {
      toolHits.push(`${req.method} ${req.url}`);
      if (req.url?.startsWith('/broken')) return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ weather: 'sunny', url: req.url }));
    });
    await new Promise<void>((resolve) => tools.listen(0, '127.0.0.1', resolve));
    toolBase = `http://127.0.0.1:${(tools.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    provider.reset();
    toolHits.length = 0;
  });
  afterAll(async () => {
    tools.closeAllConnections();
    tools.close();
    await t.close();
    await provider.close();
  });

  const agentWorkflow = (name: string, config: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    workflowWith(t, name, {
      nodes: [
        node('hook', 'webhook'),
        node('agent', 'agent', { connection_id: openai, model: 'fake-model', prompt: '{{ trigger.body.text }}', ...config }, extra),
      ],
      edges: [edge('hook', 'agent')],
    });
  const run = (workflowId: string, text: string) => runToRest(t, workflowId, { draft: true, input: { text } });
  const agentOutput = async (executionId: string) => {
    const execution = await executionRow(t, executionId);
    expect(execution.status, execution.error ?? '').toBe('completed');
    return JSON.parse(execution.output!);
  };
  const journal = async (executionId: string) =>
    (await stepRows(t, executionId))
      .filter((row) => row.kind === 'model_call' || row.kind === 'tool_call')
      .map((row) => ({ kind: row.kind, iter_index: row.iter_index, provider: row.provider, status: row.status, node_id: row.node_id }));

  it('calls a workflow tool and knowledge search, answers from memory, journals every turn and appends the exchange once', async () => {
    const base = (
      await t.request('POST', '/api/v1/knowledge-bases', { body: { data: { type: 'knowledge-base', attributes: { name: 'Ops' } } } })
    ).body.data.id as string;
    await t.request('POST', `/api/v1/knowledge-bases/${base}/documents`, {
      body: {
        data: {
          type: 'knowledge-document',
          attributes: {
            title: 'Backups',
            content: '# Backups\n\nBackups run every night at two and are kept for thirty days.',
            content_type: 'text/markdown',
          },
        },
      },
    });
    await t.deps.background.drain();
    const memory = (await t.request('POST', '/api/v1/memories', { body: { data: { type: 'memory', attributes: { name: 'Chat' } } } })).body
      .data.id as string;
    for (const [role, content] of [
      ['user', 'My name is Ada.'],
      ['assistant', 'Nice to meet you, Ada.'],
    ]) {
      await t.request('POST', `/api/v1/memories/${memory}/sessions/ada/messages`, { body: { data: { role, content } } });
    }
    const workflow = await agentWorkflow('Helper', {
      system: 'You help the operations team.',
      tools: [
        { type: 'workflow', name: 'greet', description: 'Greets a person by name', workflow_id: greeter, input_schema: GREET_SCHEMA },
      ],
      knowledge_base_ids: [base],
      memory_id: memory,
      session_key: 'ada',
    });
    provider.script(
      'chat',
      {
        body: openAiCompletion({
          toolCalls: [
            { id: 'c1', name: 'greet', arguments: { name: 'Ada' } },
            { id: 'c2', name: 'knowledge_search', arguments: { query: 'when do backups run' } },
          ],
          usage: { prompt_tokens: 40, completion_tokens: 12 },
        }),
      },
      {
        body: openAiCompletion({
          text: 'Hello, Ada! Backups run every night at two.',
          usage: { prompt_tokens: 90, completion_tokens: 15 },
        }),
      },
    );
    const executionId = await run(workflow, 'Greet me and tell me when backups run.');
    const output = await agentOutput(executionId);
    expect(output).toMatchObject({
      text: 'Hello, Ada! Backups run every night at two.',
      json: null,
      usage: { input_tokens: 130, output_tokens: 27 },
      model: 'fake-model',
      stop_reason: 'end_turn',
    });
    expect(output.tool_calls.map((c: { name: string; is_error: boolean; turn: number }) => [c.name, c.is_error, c.turn])).toEqual([
      ['greet', false, 0],
      ['knowledge_search', false, 0],
    ]);
    expect(output.tool_calls[0].result).toEqual({ greeting: 'Hello, Ada' });
    expect(output.tool_calls[1].result.results[0]).toMatchObject({ knowledge_base_id: base, title: 'Backups', heading_path: ['Backups'] });

    const [first, second] = provider.received('chat');
    // Memory's window comes before the prompt; the built-in tool is offered beside the configured one.
    expect(first!.body.messages).toEqual([
      { role: 'system', content: 'You help the operations team.' },
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Nice to meet you, Ada.' },
      { role: 'user', content: 'Greet me and tell me when backups run.' },
    ]);
    expect(first!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual(['greet', 'knowledge_search']);
    const results = second!.body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(results.map((m: { tool_call_id: string }) => m.tool_call_id)).toEqual(['c1', 'c2']);
    expect(JSON.parse(results[0].content)).toEqual({ greeting: 'Hello, Ada' });
    expect(results[1].content).toContain('thirty days');

    // The callee ran once, as a child execution started by the tool call's journal row.
    const children = await t.deps.db.selectFrom('executions').selectAll().where('parent_execution_id', '=', executionId).execute();
    expect(children.map((c) => [c.workflow_id, c.status])).toEqual([[greeter, 'completed']]);
    const rows = await stepRows(t, executionId);
    expect(rows.find((r) => r.id === children[0]!.triggered_by_step_id)).toMatchObject({
      kind: 'tool_call',
      node_id: 'agent',
      awaiting_workflow_execution_id: children[0]!.id,
    });
    expect(await journal(executionId)).toEqual([
      { kind: 'model_call', iter_index: 0, provider: 'openai_compatible', status: 'completed', node_id: 'agent' },
      { kind: 'tool_call', iter_index: 0, provider: 'workflow', status: 'completed', node_id: 'agent' },
      { kind: 'tool_call', iter_index: 0, provider: 'knowledge_search', status: 'completed', node_id: 'agent' },
      { kind: 'model_call', iter_index: 1, provider: 'openai_compatible', status: 'completed', node_id: 'agent' },
    ]);
    const modelRow = rows.find((r) => r.kind === 'model_call' && r.iter_index === 1)!;
    expect(modelRow.output.usage).toEqual({ input_tokens: 90, output_tokens: 15 });
    expect(modelRow.duration_ms).not.toBeNull();
    // The agent node's own attempt is one completed row (written running when it started), listed before its journal.
    expect(rows.filter((r) => r.kind === 'agent').map((r) => [r.status, r.attempt])).toEqual([['completed', 1]]);
    const listed = await t.request('GET', `/api/v1/executions/${executionId}/steps`);
    expect(listed.status).toBe(200);
    expect(
      listed.body.data
        .filter((s: { attributes: { node_id: string } }) => s.attributes.node_id === 'agent')
        .map((s: { attributes: { kind: string } }) => s.attributes.kind),
    ).toEqual(['agent', 'model_call', 'tool_call', 'tool_call', 'model_call']);

    const modelCalls = await t.request('GET', `/api/v1/executions/${executionId}/steps?filter[kind]=model_call`);
    expect(
      modelCalls.body.data.map((s: { attributes: { iter_index: number; provider: string } }) => [
        s.attributes.iter_index,
        s.attributes.provider,
      ]),
    ).toEqual([
      [0, 'openai_compatible'],
      [1, 'openai_compatible'],
    ]);
    const messages = await t.request('GET', `/api/v1/memories/${memory}/sessions/ada/messages`);
    expect(
      messages.body.data.map((m: { attributes: { role: string; content: string } }) => [m.attributes.role, m.attributes.content]),
    ).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'Nice to meet you, Ada.'],
      ['user', 'Greet me and tell me when backups run.'],
      ['assistant', 'Hello, Ada! Backups run every night at two.'],
    ]);
  });

  it('sends unknown tools, malformed or schema-breaking arguments and failing tools back to the model as tool errors (Anthropic Messages)', async () => {
    const workflow = await agentWorkflow('Errors', {
      connection_id: anthropic,
      tools: [
        { type: 'workflow', name: 'greet', description: 'Greets', workflow_id: greeter, input_schema: GREET_SCHEMA },
        {
          type: 'http',
          name: 'status',
          description: 'Service status',
          method: 'GET',
          url: `${toolBase}/broken`,
          input_schema: { type: 'object' },
        },
      ],
    });
    provider.script(
      'messages',
      {
        body: anthropicMessage({
          toolUses: [
            { id: 't1', name: 'teleport', input: {} },
            { id: 't2', name: 'greet', input: { name: 42 } },
            { id: 't3', name: 'greet', input: 'Ada' },
            { id: 't4', name: 'status', input: {} },
          ],
        }),
      },
      { body: anthropicMessage({ text: 'I could not do any of that.' }) },
    );
    const output = await agentOutput(await run(workflow, 'Try everything.'));
    expect(output.text).toBe('I could not do any of that.');
    expect(output.tool_calls.map((c: { result: { code: string }; is_error: boolean }) => [c.result.code, c.is_error])).toEqual([
      ['unknown_tool', true],
      ['invalid_arguments', true],
      ['invalid_arguments', true],
      ['http_500', true],
    ]);
    const sent = provider.received('messages')[1]!.body.messages.at(-1);
    expect(sent.role).toBe('user');
    expect(sent.content.map((b: { tool_use_id: string; is_error: boolean }) => [b.tool_use_id, b.is_error])).toEqual([
      ['t1', true],
      ['t2', true],
      ['t3', true],
      ['t4', true],
    ]);
    expect(sent.content[0].content).toContain('there is no tool named \\"teleport\\"');
    // No child execution ran for arguments that broke the schema.
    expect(toolHits).toEqual(['GET /broken']);
  });

  it('runs http tools through the private-address guard: an allowed host answers, a private one is a tool error', async () => {
    const workflow = await agentWorkflow('Http', {
      tools: [
        {
          type: 'http',
          name: 'weather',
          description: 'Weather by city',
          method: 'GET',
          url: `${toolBase}/weather`,
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
        {
          type: 'http',
          name: 'metadata',
          description: 'Instance metadata',
          method: 'GET',
          url: 'http://169.254.169.254/latest/meta-data',
          input_schema: { type: 'object' },
        },
      ],
    });
    provider.script(
      'chat',
      {
        body: openAiCompletion({
          toolCalls: [
            { id: 'w', name: 'weather', arguments: { city: 'Porto' } },
            { id: 'm', name: 'metadata', arguments: {} },
          ],
        }),
      },
      { body: openAiCompletion({ text: 'Sunny.' }) },
    );
    const output = await agentOutput(await run(workflow, 'Weather?'));
    expect(output.tool_calls[0]).toMatchObject({
      name: 'weather',
      is_error: false,
      result: { status: 200, body: { weather: 'sunny', url: '/weather?city=Porto' } },
    });
    expect(output.tool_calls[1]).toMatchObject({ name: 'metadata', is_error: true, result: { code: 'forbidden_address' } });
    expect(toolHits).toEqual(['GET /weather?city=Porto']);
  });

  it('ends a loop that keeps calling tools at max_turns with a clear step error', async () => {
    const workflow = await agentWorkflow('Loops', {
      max_turns: 3,
      tools: [
        {
          type: 'http',
          name: 'weather',
          description: 'Weather',
          method: 'GET',
          url: `${toolBase}/weather`,
          input_schema: { type: 'object' },
        },
      ],
    });
    for (let i = 0; i < 5; i++)
      provider.script('chat', { body: openAiCompletion({ toolCalls: [{ id: `c${i}`, name: 'weather', arguments: {} }] }) });
    const executionId = await run(workflow, 'Loop forever.');
    const execution = await executionRow(t, executionId);
    expect(execution.status).toBe('failed');
    expect(JSON.parse(execution.error!)).toMatchObject({
      node_id: 'agent',
      code: 'max_turns_exceeded',
      message: 'the model was still calling tools after max_turns (3) turns',
      retryable: false,
    });
    expect(provider.received('chat')).toHaveLength(3);
  });

  it('validates a JSON answer against response_format, asks once for a fix, then fails', async () => {
    const schema = { type: 'object', required: ['priority'], properties: { priority: { enum: ['low', 'high'] } } };
    const fixed = await agentWorkflow('Json fixed', { response_format: schema });
    provider.script(
      'chat',
      { body: openAiCompletion({ text: '{"priority": "urgent"}' }) },
      { body: openAiCompletion({ text: '```json\n{"priority": "high"}\n```' }) },
    );
    const output = await agentOutput(await run(fixed, 'Classify: the site is down.'));
    expect(output.json).toEqual({ priority: 'high' });
    const [first, second] = provider.received('chat');
    expect(first!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema } });
    expect(second!.body.messages.at(-1).content).toMatch(
      /^Your answer does not match the required JSON Schema: \/priority must be equal to one of the allowed values/,
    );

    provider.reset();
    const broken = await agentWorkflow('Json broken', { response_format: schema });
    provider.script('chat', { body: openAiCompletion({ text: 'high' }) }, { body: openAiCompletion({ text: 'still not json' }) });
    const execution = await executionRow(t, await run(broken, 'Classify.'));
    expect(execution.status).toBe('failed');
    expect(JSON.parse(execution.error!)).toMatchObject({
      code: 'invalid_response',
      message: "the model's answer does not match response_format after one request to fix it: the answer is not valid JSON",
    });
    expect(provider.received('chat')).toHaveLength(2);
  });

  it('reads stores with read_store (a row by key, a list) and refuses a store it was not given', async () => {
    const store = (await t.request('POST', '/api/v1/stores', { body: { data: { type: 'store', attributes: { name: 'Orders' } } } })).body
      .data.id as string;
    const foreign = (await t.request('POST', '/api/v1/stores', { body: { data: { type: 'store', attributes: { name: 'Secrets' } } } })).body
      .data.id as string;
    expect((await t.request('PUT', `/api/v1/stores/${store}/rows/o-1`, { body: { data: { row: { status: 'shipped' } } } })).status).toBe(
      201,
    );
    expect((await t.request('PUT', `/api/v1/stores/${store}/rows/o-2`, { body: { data: { row: { status: 'packed' } } } })).status).toBe(
      201,
    );
    const workflow = await agentWorkflow('Stores', { store_ids: [store] });
    provider.script(
      'chat',
      {
        body: openAiCompletion({
          toolCalls: [
            { id: 'k', name: 'read_store', arguments: { store_id: store, key: 'o-1' } },
            { id: 'l', name: 'read_store', arguments: { store_id: store, limit: 5 } },
            { id: 'f', name: 'read_store', arguments: { store_id: foreign, key: 'x' } },
            { id: 'n', name: 'read_store', arguments: { store_id: store, key: 'missing' } },
          ],
        }),
      },
      { body: openAiCompletion({ text: 'Order o-1 has shipped.' }) },
    );
    const output = await agentOutput(await run(workflow, 'Where is order o-1?'));
    const [byKey, list, refused, missing] = output.tool_calls;
    expect(byKey).toMatchObject({ is_error: false, result: { key: 'o-1', row: { status: 'shipped' } } });
    expect(list.result.rows.map((r: { key: string }) => r.key)).toEqual(['o-1', 'o-2']);
    expect(refused).toMatchObject({ is_error: true, result: { code: 'invalid_arguments' } });
    expect(missing).toMatchObject({ is_error: false, result: null });
    expect(provider.received('chat')[0]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual([
      'read_store',
    ]);
  });

  it('duplicates an agent workflow with its connection binding reset', async () => {
    const workflow = await agentWorkflow('Bound', {});
    const copy = await t.request('POST', `/api/v1/workflows/${workflow}/duplicate?fields[workflow]=name,graph`);
    expect(copy.status).toBe(201);
    expect(copy.body.data.attributes.graph.nodes.find((n: { id: string }) => n.id === 'agent').config).toMatchObject({
      connection_id: null,
      model: 'fake-model',
    });
  });

  it('fails clearly without a connection', async () => {
    const workflow = await agentWorkflow('Unbound', { connection_id: null });
    const execution = await executionRow(t, await run(workflow, 'Hi'));
    expect(JSON.parse(execution.error!)).toMatchObject({ code: 'connection_id_required', retryable: false });
  });
});
