import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anthropicMessage, openAiCompletion, startFakeProvider, type FakeProvider } from '../../test/support/fake-provider.js';
import { NonRetriableError, RetryAfterError, StepError } from '../engine/step-errors.js';
import { chat } from './chat-client.js';
import type { ResolvedConnection } from './connection-resolver.js';
import { embedTexts } from './embeddings-client.js';
import { ProviderError } from './provider-error.js';

const KEY = 'sk-chat-test-key-0000000000';
const ALLOW = ['127.0.0.1'];

describe('provider layer through the official SDKs', () => {
  let provider: FakeProvider;
  let openai: ResolvedConnection;
  let anthropic: ResolvedConnection;
  beforeAll(async () => {
    provider = await startFakeProvider();
    openai = { id: 'c1', provider: 'openai_compatible', baseUrl: provider.openAiBase, apiKey: KEY };
    anthropic = { id: 'c2', provider: 'anthropic', baseUrl: provider.origin, apiKey: KEY };
  });
  beforeEach(() => provider.reset());
  afterAll(() => provider.close());

  const failure = async (promise: Promise<unknown>): Promise<ProviderError> => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  };

  // The SDKs add an abort listener to the signal of each call and never remove it: one signal
  // shared by an embedding job's batches or an agent's turns must not gather them.
  it('leaves no listener of its calls on a signal that many calls share', async () => {
    const shared = new AbortController();
    for (let i = 0; i < 12; i++) {
      await chat(openai, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }, { httpAllow: ALLOW, signal: shared.signal });
      await chat(
        anthropic,
        { model: 'claude-test', messages: [{ role: 'user', content: 'hi' }] },
        { httpAllow: ALLOW, signal: shared.signal },
      );
      await embedTexts(openai, 'embed-test', ['a', 'b'], { httpAllow: ALLOW, signal: shared.signal });
    }
    expect(provider.received('chat')).toHaveLength(12);
    expect(provider.received('messages')).toHaveLength(12);
    expect(provider.received('embeddings')).toHaveLength(12);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  describe('OpenAI Chat Completions', () => {
    it('sends system, messages, tools and tool results, and normalizes text, tool calls, usage, model and stop reason', async () => {
      provider.script('chat', {
        body: openAiCompletion({
          toolCalls: [
            { id: 'call_1', name: 'lookup', arguments: { city: 'Porto' } },
            { id: 'call_2', name: 'broken', arguments: '{"a": ' },
          ],
          model: 'gpt-test-2026',
          usage: { prompt_tokens: 31, completion_tokens: 9 },
        }),
      });
      const answer = await chat(
        openai,
        {
          model: 'gpt-test',
          system: 'Be brief.',
          messages: [
            { role: 'user', content: 'Weather in Porto?' },
            { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: 'lookup', arguments: { city: 'Lisbon' } }] },
            { role: 'tool', toolCallId: 'call_0', name: 'lookup', content: '{"temp": 21}' },
          ],
          tools: [
            { name: 'lookup', description: 'Weather by city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
          ],
          temperature: 0.2,
          maxTokens: 100,
        },
        { httpAllow: ALLOW },
      );
      expect(answer).toEqual({
        text: '',
        toolCalls: [
          { id: 'call_1', name: 'lookup', arguments: { city: 'Porto' } },
          { id: 'call_2', name: 'broken', arguments: { _raw: '{"a": ' }, argumentsError: 'the arguments are not valid JSON' },
        ],
        usage: { input_tokens: 31, output_tokens: 9 },
        model: 'gpt-test-2026',
        stopReason: 'tool_use',
      });
      const sent = provider.received('chat')[0]!;
      expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(sent.body).toMatchObject({ model: 'gpt-test', temperature: 0.2, max_tokens: 100 });
      expect(sent.body.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Porto?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'lookup', arguments: '{"city":"Lisbon"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '{"temp": 21}' },
      ]);
      expect(sent.body.tools).toEqual([
        {
          type: 'function',
          function: {
            name: 'lookup',
            description: 'Weather by city',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        },
      ]);
    });

    it('maps a 429 with Retry-After onto a retryable error with that delay, and the engine vocabulary', async () => {
      provider.script('chat', { status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'Rate limit reached' } } });
      const error = await failure(chat(openai, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { httpAllow: ALLOW }));
      expect(error).toMatchObject({ kind: 'retryable', status: 429, retryAfterMs: 2000, code: 'provider_429' });
      const step = error.toStepError();
      expect(step).toBeInstanceOf(RetryAfterError);
      expect(step).toMatchObject({ code: 'provider_429', retryable: true, retryAfterMs: 2000 });
      expect(provider.received('chat')).toHaveLength(1);
    });

    it('maps 5xx onto retryable, other 4xx onto non-retryable, and malformed JSON onto malformed', async () => {
      provider.script(
        'chat',
        { status: 500, body: { error: { message: 'oops' } } },
        { status: 400, body: { error: { message: `bad request for key ${KEY}` } } },
        { raw: '{"choices": [' },
        { body: { unexpected: true } },
      );
      const server = await failure(chat(openai, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { httpAllow: ALLOW }));
      expect(server).toMatchObject({ kind: 'retryable', status: 500, retryAfterMs: null });
      expect(server.toStepError()).toBeInstanceOf(StepError);
      expect(server.toStepError().retryable).toBe(true);
      const rejected = await failure(chat(openai, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { httpAllow: ALLOW }));
      expect(rejected).toMatchObject({ kind: 'rejected', status: 400, code: 'provider_400' });
      expect(rejected.message).not.toContain(KEY);
      expect(rejected.toStepError()).toBeInstanceOf(NonRetriableError);
      expect((await failure(chat(openai, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { httpAllow: ALLOW }))).kind).toBe(
        'malformed',
      );
      const shapeless = await failure(chat(openai, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { httpAllow: ALLOW }));
      expect(shapeless).toMatchObject({ kind: 'malformed', code: 'provider_malformed_response' });
      expect(shapeless.toStepError().retryable).toBe(false);
    });

    it('refuses a private base URL unless SWITCHYARD_HTTP_ALLOW lists it', async () => {
      const error = await failure(chat(openai, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { httpAllow: [] }));
      expect(error).toMatchObject({ kind: 'forbidden_address', code: 'forbidden_address' });
      expect(error.toStepError().retryable).toBe(false);
      expect(provider.received('chat')).toHaveLength(0);
    });
  });

  describe('Anthropic Messages', () => {
    it('sends tool_use / tool_result blocks and normalizes the answer', async () => {
      provider.script('messages', {
        body: anthropicMessage({
          text: 'Looking it up.',
          toolUses: [{ id: 'toolu_1', name: 'lookup', input: { city: 'Porto' } }],
          usage: { input_tokens: 40, output_tokens: 12 },
          model: 'claude-test',
        }),
      });
      const answer = await chat(
        anthropic,
        {
          model: 'claude-test',
          system: 'Be brief.',
          messages: [
            { role: 'user', content: 'Weather?' },
            {
              role: 'assistant',
              content: 'Checking.',
              toolCalls: [
                { id: 'toolu_0', name: 'lookup', arguments: { city: 'Lisbon' } },
                { id: 'toolu_9', name: 'lookup', arguments: { city: 'Faro' } },
              ],
            },
            { role: 'tool', toolCallId: 'toolu_0', name: 'lookup', content: '21' },
            { role: 'tool', toolCallId: 'toolu_9', name: 'lookup', content: 'unknown city', isError: true },
          ],
          tools: [
            { name: 'lookup', description: 'Weather by city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
          ],
        },
        { httpAllow: ALLOW },
      );
      expect(answer).toEqual({
        text: 'Looking it up.',
        toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: { city: 'Porto' } }],
        usage: { input_tokens: 40, output_tokens: 12 },
        model: 'claude-test',
        stopReason: 'tool_use',
      });
      const sent = provider.received('messages')[0]!;
      // The SDK sends the key as `Authorization: Bearer` (1.x) or `x-api-key` (older lines).
      expect(`${sent.headers['x-api-key'] ?? ''} ${sent.headers.authorization ?? ''}`).toContain(KEY);
      expect(sent.body).toMatchObject({ model: 'claude-test', system: 'Be brief.', max_tokens: 4096 });
      expect(sent.body.messages).toEqual([
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_0', name: 'lookup', input: { city: 'Lisbon' } },
            { type: 'tool_use', id: 'toolu_9', name: 'lookup', input: { city: 'Faro' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_0', content: '21' },
            { type: 'tool_result', tool_use_id: 'toolu_9', content: 'unknown city', is_error: true },
          ],
        },
      ]);
      expect(sent.body.tools).toEqual([
        { name: 'lookup', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      ]);
    });

    it('maps Anthropic errors onto the same vocabulary', async () => {
      provider.script(
        'messages',
        {
          status: 529,
          headers: { 'retry-after': '5' },
          body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        },
        { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'model: nope' } } },
      );
      expect(
        await failure(chat(anthropic, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { httpAllow: ALLOW })),
      ).toMatchObject({ kind: 'retryable', status: 529, retryAfterMs: 5000 });
      expect(
        await failure(chat(anthropic, { model: 'nope', messages: [{ role: 'user', content: 'hi' }] }, { httpAllow: ALLOW })),
      ).toMatchObject({ kind: 'rejected', status: 404 });
    });
  });

  describe('embeddings', () => {
    it('returns one normalised vector per input, in input order', async () => {
      provider.script('embeddings', {
        body: {
          object: 'list',
          data: [
            { object: 'embedding', index: 1, embedding: [0, 3, 4] },
            { object: 'embedding', index: 0, embedding: [2, 0, 0] },
          ],
          model: 'e',
          usage: { prompt_tokens: 4, total_tokens: 4 },
        },
      });
      const result = await embedTexts(openai, 'e', ['first', 'second'], { httpAllow: ALLOW });
      expect(result.vectors.map((v) => Array.from(v))).toEqual([
        [1, 0, 0],
        [0, 0.6000000238418579, 0.800000011920929],
      ]);
      expect(result.inputTokens).toBe(4);
    });

    it('refuses answers with the wrong number of vectors or non-numbers as malformed', async () => {
      provider.script(
        'embeddings',
        { body: { data: [{ index: 0, embedding: [1] }] } },
        {
          body: {
            data: [
              { index: 0, embedding: ['x'] },
              { index: 1, embedding: [1] },
            ],
          },
        },
      );
      expect((await failure(embedTexts(openai, 'e', ['a', 'b'], { httpAllow: ALLOW }))).kind).toBe('malformed');
      expect((await failure(embedTexts(openai, 'e', ['a', 'b'], { httpAllow: ALLOW }))).kind).toBe('malformed');
    });
  });
});
