import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { systemRetryWaits } from '../src/ai/provider-retry.js';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { freePort, openAiCompletion, startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * A model call that fails retryably (429, 5xx, a refused connection) is tried again inside the
 * agent's attempt, 3 tries in all, unless the node has a `retry` policy, which then decides alone; a request the
 * provider refuses as wrong (4xx) is not. The waits go through `systemRetryWaits.sleep`, which
 * these tests replace with one that records the wait and moves the manual clock (no real
 * sleeping), except where a real wait is cancelled.
 */
describeEachDialect('agent provider retries', (dialect) => {
  let t: TestApp;
  let provider: FakeProvider;
  let openai: string;
  let anthropic: string;
  let tools: http.Server;
  let toolBase: string;
  const toolHits: string[] = [];
  const realSleep = systemRetryWaits.sleep.bind(systemRetryWaits);
  let slept: number[] = [];
  let duringWait: (() => Promise<void>) | null = null;
  let realWaits = false;

  const connect = async (attributes: Record<string, unknown>) =>
    (await t.request('POST', '/api/v1/connections', { body: { data: { type: 'connection', attributes } } })).body.data.id as string;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    provider = await startFakeProvider();
    openai = await connect({
      provider: 'openai_compatible',
      name: 'Local',
      base_url: provider.openAiBase,
      api_key: 'sk-retry-test-key-000',
    });
    anthropic = await connect({ provider: 'anthropic', name: 'Claude', base_url: provider.origin, api_key: 'sk-retry-test-key-111' });
    tools = http.createServer((req, res) => {
      toolHits.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ weather: 'sunny' }));
    });
    await new Promise<void>((resolve) => tools.listen(0, '127.0.0.1', resolve));
    toolBase = `http://127.0.0.1:${(tools.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    provider.reset();
    toolHits.length = 0;
    slept = [];
    duringWait = null;
    realWaits = false;
    vi.spyOn(systemRetryWaits, 'sleep').mockImplementation(async (ms, cancel) => {
      slept.push(ms);
      if (realWaits) return realSleep(ms, cancel);
      t.clock.advance(ms);
      await duringWait?.();
    });
  });
  afterEach(() => vi.restoreAllMocks());
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
  const run = (workflowId: string) => runToRest(t, workflowId, { draft: true, input: { text: 'Hi' } });
  const agentRows = async (executionId: string) => (await stepRows(t, executionId)).filter((row) => row.kind === 'agent');
  const modelCalls = async (executionId: string) => (await stepRows(t, executionId)).filter((row) => row.kind === 'model_call');
  const limited = (retryAfter: string) => ({
    status: 429,
    headers: { 'retry-after': retryAfter },
    body: { error: { message: 'Rate limit reached', type: 'rate_limit' } },
  });

  it('completes after a 429 with Retry-After without a node retry policy, keeping the failed try on the turn', async () => {
    const workflow = await agentWorkflow('Limited once', {});
    provider.script('chat', limited('7'));
    const executionId = await run(workflow);
    const execution = await executionRow(t, executionId);
    expect(execution.status, execution.error ?? '').toBe('completed');
    expect(JSON.parse(execution.output!).text).toBe('ok');
    expect(slept).toEqual([7000]);
    expect(provider.received('chat')).toHaveLength(2);
    // One attempt of the node; the try that failed is on the turn's journal row.
    expect((await agentRows(executionId)).map((r) => [r.status, r.attempt])).toEqual([['completed', 1]]);
    const [turn] = await modelCalls(executionId);
    expect(turn!.output.retries).toEqual([{ attempt: 1, code: 'provider_429', status: 429, retry_after_ms: 7000, waited_ms: 7000 }]);
  });

  it('honours a Retry-After given as an HTTP date, and caps a long one at 30 s', async () => {
    const workflow = await agentWorkflow('Limited by date', {});
    provider.script('chat', limited(new Date(t.clock.nowMs() + 5000).toUTCString()), limited('86400'));
    const execution = await executionRow(t, await run(workflow));
    expect(execution.status, execution.error ?? '').toBe('completed');
    expect(slept).toEqual([5000, 30_000]);
  });

  it('completes after a 500 and a 503 (Anthropic: a 529), with exponential backoff and jitter', async () => {
    const workflow = await agentWorkflow('Server errors', {});
    provider.script('chat', { status: 500, body: { error: { message: 'oops' } } }, { status: 503, body: { error: { message: 'busy' } } });
    const execution = await executionRow(t, await run(workflow));
    expect(execution.status, execution.error ?? '').toBe('completed');
    expect(provider.received('chat')).toHaveLength(3);
    expect(slept).toHaveLength(2);
    expect(slept[0]).toBeGreaterThanOrEqual(375);
    expect(slept[0]).toBeLessThanOrEqual(500);
    expect(slept[1]).toBeGreaterThanOrEqual(750);
    expect(slept[1]).toBeLessThanOrEqual(1000);

    const claude = await agentWorkflow('Overloaded', { connection_id: anthropic });
    provider.script('messages', { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    expect((await executionRow(t, await run(claude))).status).toBe('completed');
    expect(provider.received('messages')).toHaveLength(2);
  });

  it('completes after a refused connection', async () => {
    const port = await freePort();
    const local = await connect({ provider: 'openai_compatible', name: 'Late', base_url: `http://127.0.0.1:${port}/v1` });
    const workflow = await agentWorkflow('Refused once', { connection_id: local });
    let late: FakeProvider | null = null;
    duringWait = async () => {
      late ??= await startFakeProvider({ port });
    };
    try {
      const executionId = await run(workflow);
      const execution = await executionRow(t, executionId);
      expect(execution.status, execution.error ?? '').toBe('completed');
      expect((await modelCalls(executionId))[0]!.output.retries).toMatchObject([{ code: 'provider_network_error', status: null }]);
    } finally {
      await (late as FakeProvider | null)?.close();
    }
  });

  it('fails at once on a 400 or a 401, asking the provider once', async () => {
    const workflow = await agentWorkflow('Bad request', {});
    provider.script('chat', { status: 400, body: { error: { message: 'unknown parameter' } } });
    const execution = await executionRow(t, await run(workflow));
    expect(execution.status).toBe('failed');
    expect(JSON.parse(execution.error!)).toMatchObject({ node_id: 'agent', code: 'provider_400', retryable: false });
    expect(provider.received('chat')).toHaveLength(1);

    const claude = await agentWorkflow(
      'Bad key',
      { connection_id: anthropic },
      { retry: { max_attempts: 3, backoff_ms: 10, backoff: 'fixed' } },
    );
    provider.script('messages', {
      status: 401,
      body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
    });
    const unauthorized = await executionRow(t, await run(claude));
    expect(unauthorized.status).toBe('failed');
    expect(JSON.parse(unauthorized.error!)).toMatchObject({ code: 'provider_401', retryable: false });
    expect(provider.received('messages')).toHaveLength(1);
    expect(slept).toEqual([]);
  });

  it('fails after 3 tries in all without a node retry policy, every try in the step error', async () => {
    const workflow = await agentWorkflow('Always limited', {});
    provider.script('chat', limited('1'), limited('2'), limited('3'));
    const executionId = await run(workflow);
    expect((await executionRow(t, executionId)).status).toBe('failed');
    expect(provider.received('chat')).toHaveLength(3);
    const [failed] = await agentRows(executionId);
    expect(failed!.error).toMatchObject({
      code: 'provider_429',
      retryable: true,
      retry_after_ms: 3000,
      details: {
        status: 429,
        provider: 'openai_compatible',
        attempts: 3,
        retries: [
          { attempt: 1, code: 'provider_429', waited_ms: 1000 },
          { attempt: 2, code: 'provider_429', waited_ms: 2000 },
        ],
      },
    });
  });

  it("leaves retrying to the node's own retry policy, without repeating a completed turn", async () => {
    const workflow = await agentWorkflow(
      'Policy',
      {
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
      },
      { retry: { max_attempts: 3, backoff_ms: 1000, backoff: 'fixed' } },
    );
    provider.script('chat', { body: openAiCompletion({ toolCalls: [{ id: 'c1', name: 'weather', arguments: {} }] }) }, limited('7'), {
      body: openAiCompletion({ text: 'Sunny.' }),
    });
    const executionId = await run(workflow);
    // One 429 is one failed attempt of the node: no tries inside it, the policy's wait instead.
    expect((await executionRow(t, executionId)).status).toBe('waiting');
    const [failed] = (await agentRows(executionId)).filter((r) => r.status === 'failed');
    expect(failed!.error).toMatchObject({ code: 'provider_429', retryable: true, retry_after_ms: 7000 });
    expect(failed!.error).not.toHaveProperty('details.attempts');
    expect(slept).toEqual([]);
    expect(provider.received('chat')).toHaveLength(2);
    t.clock.advance(6_000);
    await t.deps.engine.runDue();
    await t.deps.engine.idle();
    expect(provider.received('chat')).toHaveLength(2);
    t.clock.advance(1_001);
    await t.deps.engine.runDue();
    await t.deps.engine.idle();
    const execution = await executionRow(t, executionId);
    expect(execution.status, execution.error ?? '').toBe('completed');
    expect(JSON.parse(execution.output!).text).toBe('Sunny.');
    // Turn 0 and its tool call ran once; only the rate-limited turn was asked again.
    expect(provider.received('chat')).toHaveLength(3);
    expect(toolHits).toEqual(['GET /weather']);
    expect((await agentRows(executionId)).map((r) => [r.status, r.attempt])).toEqual([
      ['failed', 1],
      ['completed', 2],
    ]);
    expect((await modelCalls(executionId)).map((r) => r.iter_index)).toEqual([0, 1]);
  });

  it('ends a real wait at once when the execution is cancelled', async () => {
    realWaits = true;
    const workflow = await agentWorkflow('Cancelled while waiting', {});
    provider.script('chat', limited('30'));
    const started = Date.now();
    const res = await t.request('POST', `/api/v1/workflows/${workflow}/run`, { body: { data: { draft: true, input: { text: 'Hi' } } } });
    expect(res.status).toBe(202);
    const executionId = res.body.execution_id as string;
    await vi.waitFor(() => expect(slept).toEqual([30_000]), { timeout: 5000, interval: 10 });
    expect((await t.request('POST', `/api/v1/executions/${executionId}/cancel`)).status).toBe(200);
    await t.deps.engine.idle();
    expect((await executionRow(t, executionId)).status).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(provider.received('chat')).toHaveLength(1);
  });
});
