import { describe, expect, it } from 'vitest';
import { readWorkflowDocument } from '../read-document.js';
import { UNBOUND_ID } from '../../graph/call-targets.js';

/** Synthetic n8n documents, one node family each (the fixtures under test/fixtures/n8n are real exports). */
function draftOf(nodes: Array<Record<string, unknown>>, connections: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return readWorkflowDocument(
    { name: 'T', nodes: nodes.map((n, i) => ({ parameters: {}, typeVersion: 1, position: [i * 200, 0], ...n })), connections, ...extra },
    '/data/document',
  );
}
const nodesOf = (draft: ReturnType<typeof draftOf>) => draft.graph.nodes as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
const main = (...targets: string[][]) => ({ main: targets.map((list) => list.map((node) => ({ node, type: 'main', index: 0 }))) });

describe('HTTP Request', () => {
  it('maps version 1 parameters, drops a literal secret header and notes the credential', () => {
    const draft = draftOf([
      {
        name: 'Get',
        type: 'n8n-nodes-base.httpRequest',
        parameters: {
          requestMethod: 'POST',
          url: '=https://api.test/{{ $json.id }}',
          authentication: 'headerAuth',
          headerParametersUi: {
            parameter: [
              { name: 'Authorization', value: 'Bearer sk-live-123' },
              { name: 'X-Trace', value: '={{ $json.trace }}' },
            ],
          },
          bodyParametersUi: {
            parameter: [
              { name: 'a', value: 1 },
              { name: 'b', value: '={{ $json.b }}' },
            ],
          },
          options: { timeout: 5000 },
        },
        credentials: { httpHeaderAuth: { id: '1', name: 'My key' } },
      },
    ]);
    expect(nodesOf(draft)[0]).toMatchObject({
      type: 'http',
      config: {
        method: 'POST',
        url: 'https://api.test/{{ input.id }}',
        headers: { Authorization: '', 'X-Trace': '{{ input.trace }}' },
        query: {},
        body: { a: 1, b: '{{ input.b }}' },
        timeout_ms: 5000,
      },
    });
    expect(draft.report.requirements.provider_keys).toEqual([
      expect.objectContaining({ pointer: '/nodes/0/config/headers/Authorization' }),
    ]);
    expect(draft.report.requirements.credentials.map((r) => r.pointer)).toEqual(['/nodes/0/config/headers', '/nodes/0/config/headers']);
    expect(JSON.stringify(draft.graph)).not.toContain('sk-live-123');
  });

  it('maps version 4 query and JSON bodies, a JSON template through $eval and a urlencoded form', () => {
    const draft = draftOf([
      {
        name: 'J',
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        parameters: {
          method: 'PUT',
          url: 'https://x.test',
          sendQuery: true,
          queryParameters: { parameters: [{ name: 'q', value: '={{ $json.q }}' }] },
          sendBody: true,
          specifyBody: 'json',
          jsonBody: '={ "id": {{ $json.id }} }',
        },
      },
      {
        name: 'F',
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        parameters: {
          method: 'POST',
          url: 'https://x.test',
          sendBody: true,
          contentType: 'form-urlencoded',
          bodyParameters: { parameters: [{ name: 'a b', value: 'c&d' }] },
        },
      },
      {
        name: 'L',
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 3,
        parameters: { url: 'https://x.test', sendBody: true, specifyBody: 'json', jsonBody: '{"fixed": true}' },
      },
      {
        name: 'M',
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        parameters: { url: 'https://x.test', sendBody: true, contentType: 'multipart-form-data' },
      },
    ]);
    const [json, form, literal, multipart] = nodesOf(draft);
    expect(json!.config).toMatchObject({
      method: 'PUT',
      query: { q: '{{ input.q }}' },
      body: '{{ $eval("{ \\"id\\": " & $string(input.id) & " }") }}',
    });
    expect(form!.config).toMatchObject({ body: 'a+b=c%26d', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(literal!.config.body).toEqual({ fixed: true });
    expect(multipart!.type).toBe('placeholder');
  });
});

describe('Code, Function and FunctionItem', () => {
  it('put the n8n prelude in front of the original code and list APIs it does not offer', () => {
    const draft = draftOf([
      { name: 'Code', type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { jsCode: 'return $input.all();' } },
      { name: 'Fn', type: 'n8n-nodes-base.function', parameters: { functionCode: 'return items;' } },
      { name: 'Item', type: 'n8n-nodes-base.functionItem', parameters: { functionCode: 'item.x = $env.X; return item;' } },
      { name: 'Py', type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { language: 'python', pythonCode: 'return _input.all()' } },
    ]);
    const [code, fn, item, py] = nodesOf(draft);
    expect(code!.config.code).toContain('// n8n compatibility prelude');
    expect(code!.config.code).toContain('return $input.all();');
    expect(fn!.config.code).toContain('return items;');
    expect(item!.config.code).toContain('__run(__n8n.items, __item.json');
    expect(py).toMatchObject({ type: 'placeholder', config: { reason: expect.stringContaining('python') } });
    expect(draft.report.requirements.expressions).toEqual([expect.objectContaining({ pointer: '/nodes/2/config/code', api: '$env' })]);
  });
});

describe('control flow', () => {
  it('maps IF 1 to true/false ports and Switch 1 outputs, fallback included', () => {
    const draft = draftOf(
      [
        {
          name: 'If',
          type: 'n8n-nodes-base.if',
          parameters: { conditions: { number: [{ value1: '={{ $json.n }}', operation: 'larger', value2: 1 }] } },
        },
        {
          name: 'Sw',
          type: 'n8n-nodes-base.switch',
          parameters: {
            dataType: 'string',
            value1: '={{ $json.kind }}',
            rules: { rules: [{ value2: 'a' }, { value2: 'b', output: 2 }] },
            fallbackOutput: 3,
          },
        },
        { name: 'T', type: 'n8n-nodes-base.noOp' },
        { name: 'U', type: 'n8n-nodes-base.noOp' },
        { name: 'V', type: 'n8n-nodes-base.noOp' },
      ],
      { If: main(['T'], ['Sw']), Sw: main(['T'], [], ['U'], ['V']) },
    );
    expect(nodesOf(draft)[0]!.config.condition).toBe('{{ (input.n > 1) }}');
    expect(nodesOf(draft)[1]!.config).toMatchObject({
      value: true,
      cases: [
        { port: 'output_0', equals: '{{ (input.kind = "a") }}' },
        { port: 'output_1', equals: '{{ false }}' },
        { port: 'output_2', equals: '{{ (input.kind = "b") }}' },
        { port: 'output_3', equals: '{{ false }}' },
      ],
    });
    expect(draft.graph.edges).toEqual([
      { source: 'if', source_port: 'true', target: 't', target_port: 'in' },
      { source: 'if', source_port: 'false', target: 'sw', target_port: 'in' },
      { source: 'sw', source_port: 'output_0', target: 't', target_port: 'in' },
      { source: 'sw', source_port: 'output_2', target: 'u', target_port: 'in' },
      { source: 'sw', source_port: 'output_3', target: 'v', target_port: 'in' },
      { source: 'sw', source_port: 'default', target: 'v', target_port: 'in' },
    ]);
  });

  it('maps Merge to a code step reading both inputs, Wait to a duration and Loop Over Items to a loop without its back edge', () => {
    const draft = draftOf(
      [
        { name: 'A', type: 'n8n-nodes-base.noOp' },
        { name: 'B', type: 'n8n-nodes-base.noOp' },
        { name: 'Merge', type: 'n8n-nodes-base.merge', typeVersion: 3 },
        { name: 'Wait', type: 'n8n-nodes-base.wait', typeVersion: 1.1, parameters: { amount: 2, unit: 'minutes' } },
        { name: 'Loop', type: 'n8n-nodes-base.splitInBatches', typeVersion: 3, parameters: { batchSize: 2 } },
        { name: 'Body', type: 'n8n-nodes-base.noOp' },
        { name: 'After', type: 'n8n-nodes-base.noOp' },
      ],
      {
        A: main(['Merge']),
        B: { main: [[{ node: 'Merge', type: 'main', index: 1 }]] },
        Merge: main(['Wait']),
        Wait: main(['Loop']),
        Loop: main(['After'], ['Body']),
        Body: main(['Loop']),
      },
    );
    const nodes = nodesOf(draft);
    expect(nodes[2]!.config.code).toContain('const input1 = [...items(nodes["a"])];');
    expect(nodes[2]!.config.code).toContain('const input2 = [...items(nodes["b"])];');
    expect(nodes[3]).toMatchObject({ type: 'wait', config: { duration_ms: 120000 } });
    expect(nodes[4]).toMatchObject({ type: 'loop', config: { items: expect.stringContaining('$floor($i / 2)') } });
    expect(draft.graph.edges).toContainEqual({ source: 'loop', source_port: 'body', target: 'body', target_port: 'in' });
    expect(draft.graph.edges).toContainEqual({ source: 'loop', source_port: 'done', target: 'after', target_port: 'in' });
    expect(draft.graph.edges).not.toContainEqual(expect.objectContaining({ source: 'body', target: 'loop' }));
  });

  it('keeps disabled, retry and error handling, and routes continue-regular-output failures down output 0 too', () => {
    const draft = draftOf(
      [
        {
          name: 'Call',
          type: 'n8n-nodes-base.httpRequest',
          typeVersion: 4,
          parameters: { url: 'https://x.test' },
          onError: 'continueRegularOutput',
          retryOnFail: true,
          maxTries: 4,
          waitBetweenTries: 2000,
          disabled: true,
        },
        { name: 'Next', type: 'n8n-nodes-base.noOp' },
      ],
      { Call: main(['Next']) },
    );
    expect(nodesOf(draft)[0]).toMatchObject({
      disabled: true,
      on_error: 'continue',
      retry: { max_attempts: 4, backoff_ms: 2000, backoff: 'fixed' },
    });
    expect(draft.graph.edges).toEqual([
      { source: 'call', source_port: 'out', target: 'next', target_port: 'in' },
      { source: 'call', source_port: 'error', target: 'next', target_port: 'in' },
    ]);
  });
});

describe('triggers, calls and stores', () => {
  it("maps the schedule of a Cron node to a schedule trigger in the workflow's time zone", () => {
    const draft = draftOf(
      [
        {
          name: 'Cron',
          type: 'n8n-nodes-base.cron',
          parameters: { triggerTimes: { item: [{ mode: 'everyWeek', hour: 8, minute: 30, weekday: 1 }] } },
        },
      ],
      {},
      { settings: { timezone: 'Europe/Berlin' } },
    );
    expect(nodesOf(draft)[0]).toMatchObject({
      type: 'schedule',
      config: { cron: '30 8 * * 1', timezone: 'Europe/Berlin', catch_up: 'skip' },
    });
  });

  it('maps an interval of a Schedule Trigger to interval_ms, without a time zone', () => {
    const draft = draftOf(
      [
        {
          name: 'Every 5 min',
          type: 'n8n-nodes-base.scheduleTrigger',
          typeVersion: 1.2,
          parameters: { rule: { interval: [{ field: 'minutes', minutesInterval: 5 }] } },
        },
      ],
      {},
      { settings: { timezone: 'Europe/Berlin' } },
    );
    expect(nodesOf(draft)[0]).toMatchObject({ type: 'schedule', config: { interval_ms: 300_000, catch_up: 'skip' } });
    expect(nodesOf(draft)[0]!.config).not.toHaveProperty('timezone');
    const seconds = draftOf([
      {
        name: 'Every 30 s',
        type: 'n8n-nodes-base.scheduleTrigger',
        typeVersion: 1.2,
        parameters: { rule: { interval: [{ field: 'seconds', secondsInterval: 30 }] } },
      },
    ]);
    expect(nodesOf(seconds)[0]!.config).toEqual({ interval_ms: 30_000, catch_up: 'skip' });
    const everyX = draftOf([
      { name: 'Cron', type: 'n8n-nodes-base.cron', parameters: { triggerTimes: { item: [{ mode: 'everyX', value: 3, unit: 'hours' }] } } },
    ]);
    expect(nodesOf(everyX)[0]!.config).toEqual({ interval_ms: 10_800_000, catch_up: 'skip' });
  });

  it('reads the called workflow from every n8n shape', () => {
    const draft = draftOf(
      [
        { name: 'Plain', type: 'n8n-nodes-base.executeWorkflow', parameters: { workflowId: '12' } },
        {
          name: 'Locator',
          type: 'n8n-nodes-base.executeWorkflow',
          typeVersion: 1.1,
          parameters: {
            workflowId: { __rl: true, value: 'abcDEF', mode: 'list', cachedResultName: 'Child' },
            options: { waitForSubWorkflow: false },
          },
        },
        { name: 'Self', type: 'n8n-nodes-base.executeWorkflow', parameters: { workflowId: '={{ $workflow.id }}' } },
        { name: 'Computed', type: 'n8n-nodes-base.executeWorkflow', parameters: { workflowId: '={{ $json.target }}' } },
        { name: 'File', type: 'n8n-nodes-base.executeWorkflow', parameters: { source: 'localFile', workflowPath: '/x.json' } },
      ],
      {},
      { id: 'me' },
    );
    expect(nodesOf(draft).map((n) => n.type)).toEqual(['call_workflow', 'call_workflow', 'call_workflow', 'call_workflow', 'placeholder']);
    expect(nodesOf(draft)[1]!.config).toEqual({ workflow_id: UNBOUND_ID, input: '{{ input }}', wait: false });
    expect(draft.bindings.map((b) => [b.pointer, b.by])).toEqual([
      ['/nodes/0/config/workflow_id', { export_key: 'n8n-12' }],
      ['/nodes/1/config/workflow_id', { export_key: 'n8n-abcDEF' }],
      ['/nodes/2/config/workflow_id', { self: true }],
      ['/nodes/3/config/workflow_id', null],
    ]);
    expect(draft.exportKey).toBe('n8n-me');
  });

  it("maps a data table upsert keyed by one equality onto save_to_store bound by the table's slug", () => {
    const draft = draftOf([
      {
        name: 'Save',
        type: 'n8n-nodes-base.dataTable',
        parameters: {
          operation: 'upsert',
          dataTableId: { __rl: true, mode: 'list', value: 'tbl1', cachedResultName: 'Orders 2025' },
          filters: { conditions: [{ keyName: 'order_id', keyValue: '={{ $json.id }}' }] },
          columns: { mappingMode: 'defineBelow', value: { total: '={{ $json.total }}' } },
        },
      },
      {
        name: 'Get',
        type: 'n8n-nodes-base.dataTable',
        parameters: { operation: 'get', dataTableId: 'Orders 2025', filters: { conditions: [{ keyName: 'order_id', keyValue: 'A1' }] } },
      },
    ]);
    expect(nodesOf(draft)[0]).toMatchObject({
      type: 'save_to_store',
      config: { store_id: UNBOUND_ID, key: '{{ $string(input.id) }}', row: { total: '{{ input.total }}' }, mode: 'upsert' },
    });
    expect(draft.bindings[0]).toMatchObject({ pointer: '/nodes/0/config/store_id', by: { slug: 'orders-2025' } });
    // With the read_store step in the catalog, a get by key maps onto it (bound like the save).
    expect(nodesOf(draft)[1]).toEqual(expect.objectContaining({ type: 'read_store', config: { store_id: UNBOUND_ID, key: 'A1' } }));
  });

  it('makes sticky notes annotations, never steps, and accounts for every source node', () => {
    const draft = draftOf([
      { name: 'Note', type: 'n8n-nodes-base.stickyNote', parameters: { content: '## Read me', width: 300, height: 120, color: 4 } },
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger' },
    ]);
    expect(nodesOf(draft).map((n) => n.id)).toEqual(['start']);
    expect(draft.graph.annotations).toEqual([
      { id: 'note', name: 'Note', text: '## Read me', position: { x: 0, y: 0 }, size: { width: 300, height: 120 }, color: 4 },
    ]);
    expect(draft.report.sourceNodes.map((s) => [s.name, s.became, s.id])).toEqual([
      ['Start', 'step', 'start'],
      ['Note', 'annotation', 'note'],
    ]);
  });
});

describe('Respond to Webhook', () => {
  it('answers as n8n would for each respondWith', () => {
    const draft = draftOf([
      { name: 'First', type: 'n8n-nodes-base.respondToWebhook', parameters: { options: { responseKey: 'data.item' } } },
      { name: 'All', type: 'n8n-nodes-base.respondToWebhook', parameters: { respondWith: 'allIncomingItems' } },
      {
        name: 'Json',
        type: 'n8n-nodes-base.respondToWebhook',
        parameters: { respondWith: 'json', responseBody: '={{ { "ok": true } }}', options: { responseCode: 201 } },
      },
      { name: 'Text', type: 'n8n-nodes-base.respondToWebhook', parameters: { respondWith: 'text', responseBody: '=Hi {{ $json.name }}' } },
      { name: 'Go', type: 'n8n-nodes-base.respondToWebhook', parameters: { respondWith: 'redirect', redirectURL: 'https://x.test' } },
      { name: 'Jwt', type: 'n8n-nodes-base.respondToWebhook', parameters: { respondWith: 'jwt' } },
    ]);
    const [first, all, json, text, go, jwt] = nodesOf(draft);
    expect(first!.config).toEqual({ status: 200, headers: {}, body: '{{ {"data": {"item": input[0]}} }}' });
    expect(all!.config.body).toBe('{{ $append([], input) }}');
    expect(json!.config.status).toBe(201);
    expect(draft.report.requirements.expressions).toContainEqual(expect.objectContaining({ pointer: '/nodes/2/config/body' }));
    expect(text!.config).toEqual({ status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Hi {{ input.name }}' });
    expect(go!.config).toEqual({ status: 307, headers: { location: 'https://x.test' }, body: null });
    expect(jwt!.type).toBe('placeholder');
  });
});
