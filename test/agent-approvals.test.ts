import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { openAiCompletion, startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** An agent tool with `requires_approval: true` waits for a decision before it runs (docs/run-control.md). */
describeEachDialect('agent tools that require approval', (dialect) => {
  let t: TestApp;
  let provider: FakeProvider;
  let workflow: string;
  let tools: http.Server;
  const toolHits: string[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    provider = await startFakeProvider();
    const connection = (
      await t.request('POST', '/api/v1/connections', {
        body: {
          data: {
            type: 'connection',
            attributes: { provider: 'openai_compatible', name: 'Local', base_url: provider.openAiBase, api_key: 'sk-agent-test-key-000' },
          },
        },
      })
    ).body.data.id as string;
    tools = http.createServer((req, res) => {
      toolHits.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"refunded":true}');
    });
    await new Promise<void>((resolve) => tools.listen(0, '127.0.0.1', resolve));
    const toolBase = `http://127.0.0.1:${(tools.address() as AddressInfo).port}`;
    workflow = await workflowWith(t, 'Refunds', {
      nodes: [
        node('hook', 'webhook'),
        node('agent', 'agent', {
          connection_id: connection,
          model: 'fake-model',
          prompt: 'Refund order 7.',
          tools: [
            {
              type: 'http',
              name: 'refund',
              description: 'Refunds an order',
              method: 'POST',
              url: `${toolBase}/refund`,
              input_schema: { type: 'object' },
              requires_approval: true,
              approval_timeout_ms: 60_000,
            },
          ],
        }),
      ],
      edges: [edge('hook', 'agent')],
    });
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

  const script = () =>
    provider.script(
      'chat',
      { body: openAiCompletion({ toolCalls: [{ id: 'r1', name: 'refund', arguments: { order: 7 } }] }) },
      { body: openAiCompletion({ text: 'Done.' }) },
    );
  /** The tool call's journal row, waiting for its decision. */
  const pendingCall = async (id: string) => {
    const rows = await stepRows(t, id);
    const call = rows.find((r) => r.kind === 'tool_call')!;
    // DESIGN.md: the tool call's record waits, with the links at the top of its output.
    expect(call.status).toBe('waiting');
    expect(call.output).toMatchObject({
      approve_url: call.output.approval.approve_url,
      reject_url: call.output.approval.reject_url,
      expires_at: call.output.approval.expires_at,
    });
    return { call, attempt: rows.find((r) => r.node_id === 'agent' && r.kind === 'agent')! };
  };
  const decide = (id: string, stepId: string, decision: string) =>
    t.request('POST', `/api/v1/executions/${id}/steps/${stepId}/decision`, { body: { data: { decision, comment: 'checked' } } });
  const decideWithout = (id: string, stepId: string) =>
    t.request('POST', `/api/v1/executions/${id}/steps/${stepId}/decision`, { body: { data: { decision: 'reject' } } });
  const sentToModel = () => provider.received('chat').at(-1)!.body.messages.at(-1);

  it('waits without running the tool, then runs it once approved and the model goes on', async () => {
    script();
    const id = await runToRest(t, workflow);
    expect((await executionRow(t, id)).status).toBe('waiting');
    const { call, attempt } = await pendingCall(id);
    expect(toolHits).toEqual([]);
    expect(attempt.status).toBe('waiting');
    expect(call.output.approval).toEqual({
      message: 'The agent asks to call the tool "refund" with {"order":7}.',
      approve_url: expect.stringMatching(/^http:\/\/sy\.test\/approvals\//),
      reject_url: expect.stringMatching(/^http:\/\/sy\.test\/approvals\//),
      expires_at: attempt.resume_at,
    });
    expect(attempt.output).toEqual({ waiting_for_approval: { step_id: call.id, tool: 'refund', ...call.output.approval } });
    const res = await decide(id, call.id, 'approve');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await t.deps.engine.idle();
    const execution = await executionRow(t, id);
    expect(execution.status, execution.error ?? '').toBe('completed');
    expect(toolHits).toEqual(['POST /refund']);
    expect(JSON.parse(execution.output!).text).toBe('Done.');
    // The model was asked once for the tool call (replayed from the journal on resume), then once after it.
    expect(provider.received('chat')).toHaveLength(2);
    expect(sentToModel().role).toBe('tool');
    const done = (await stepRows(t, id)).find((r) => r.kind === 'tool_call')!;
    expect(done.status).toBe('completed');
    expect(done.output.decision).toMatchObject({ decision: 'approve', comment: 'checked' });
    expect((await decide(id, call.id, 'reject')).status).toBe(409);
  });

  it('two calls needing approval in one turn wait one after the other', async () => {
    provider.script(
      'chat',
      {
        body: openAiCompletion({
          toolCalls: [
            { id: 'r1', name: 'refund', arguments: { order: 1 } },
            { id: 'r2', name: 'refund', arguments: { order: 2 } },
          ],
        }),
      },
      { body: openAiCompletion({ text: 'Both done.' }) },
    );
    const id = await runToRest(t, workflow);
    const first = (await pendingCall(id)).call;
    expect((await decide(id, first.id, 'approve')).status).toBe(200);
    await t.deps.engine.idle();
    expect((await executionRow(t, id)).status).toBe('waiting');
    const second = (await stepRows(t, id)).find((r) => r.kind === 'tool_call' && r.status === 'waiting')!;
    expect(second.output.arguments).toEqual({ order: 2 });
    expect(toolHits).toEqual(['POST /refund']);
    expect((await decide(id, second.id, 'reject')).status).toBe(200);
    await t.deps.engine.idle();
    expect((await executionRow(t, id)).status).toBe('completed');
    expect(toolHits).toEqual(['POST /refund']);
    expect(provider.received('chat')).toHaveLength(2);
  });

  it('a rejection goes back to the model as the tool error text "rejected: <comment>", and the tool never runs', async () => {
    script();
    const id = await runToRest(t, workflow);
    const { call } = await pendingCall(id);
    const link = await t.request('POST', new URL(call.output.approval.reject_url).pathname, {
      token: null,
      body: { comment: 'not this order' },
      contentType: 'application/json',
    });
    expect(link.status).toBe(200);
    expect(link.body).toEqual({ decision: 'reject' });
    await t.deps.engine.idle();
    const execution = await executionRow(t, id);
    expect(execution.status).toBe('completed');
    expect(toolHits).toEqual([]);
    const answer = sentToModel();
    expect(answer.role).toBe('tool');
    expect(answer.content).toBe('rejected: not this order');
    expect(JSON.parse(execution.output!).tool_calls).toEqual([
      expect.objectContaining({ name: 'refund', result: 'rejected: not this order', is_error: true }),
    ]);
    // A used link is 410.
    expect((await t.request('POST', new URL(call.output.approval.approve_url).pathname, { token: null })).status).toBe(410);
  });

  it('a rejection without a comment is "rejected: "', async () => {
    script();
    const id = await runToRest(t, workflow);
    const { call } = await pendingCall(id);
    expect((await decideWithout(id, call.id)).status).toBe(200);
    await t.deps.engine.idle();
    expect(sentToModel().content).toBe('rejected: ');
  });

  it('the time-out goes back to the model as approval_timed_out', async () => {
    script();
    const id = await runToRest(t, workflow);
    const { call } = await pendingCall(id);
    t.clock.advance(60_000);
    await t.deps.engine.runDue();
    await t.deps.engine.idle();
    expect((await executionRow(t, id)).status).toBe('completed');
    expect(toolHits).toEqual([]);
    expect(JSON.parse(sentToModel().content).code).toBe('approval_timed_out');
    expect((await decide(id, call.id, 'approve')).status).toBe(409);
  });
});
