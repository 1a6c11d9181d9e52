import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../../../test/support/fake-provider.js';
import { stepContext } from '../../../test/support/step-context.js';
import { chat } from '../../ai/chat-client.js';
import { systemRetryWaits } from '../../ai/provider-retry.js';
import type { JournalEntry } from '../step-journal.js';
import type { AgentResources } from './agent-resources.js';
import { runAgent } from './run-agent.js';

let provider: FakeProvider;
beforeAll(async () => {
  provider = await startFakeProvider();
});
afterEach(() => vi.restoreAllMocks());
afterAll(() => provider.close());

/**
 * The provider's time-out is 120 s in the service; here 200 ms, through the same SDK call, so
 * a time-out needs no long wait (test/agent-provider-retries.test.ts covers the rest through
 * the engine).
 */
it('tries a model call that timed out again within the attempt, without a node retry policy', async () => {
  const slept: number[] = [];
  vi.spyOn(systemRetryWaits, 'sleep').mockImplementation(async (ms) => void slept.push(ms));
  provider.script('chat', { hang: true });
  const connection = { id: 'c1', provider: 'openai' as const, baseUrl: provider.openAiBase, apiKey: 'sk-timeout-test-000' };
  const resources = {
    chat: async (_workspace, _connection, request, signal) =>
      Object.assign(await chat(connection, request, { httpAllow: ['127.0.0.1'], signal, timeoutMs: 200 }), { provider: 'openai' }),
  } as Partial<AgentResources> as AgentResources;
  const recorded: JournalEntry[] = [];
  const result = await runAgent(
    stepContext({
      config: { connection_id: '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e', model: 'm', prompt: 'Hi', tools: [] },
      agent: resources,
      journal: { load: async () => [], record: async (entry) => void recorded.push(structuredClone(entry)) },
    }),
  );
  expect(result.output).toMatchObject({ text: 'ok', stop_reason: 'end_turn' });
  expect(provider.received('chat')).toHaveLength(2);
  expect(slept).toHaveLength(1);
  expect(recorded.map((entry) => [entry.kind, entry.status])).toEqual([['model_call', 'completed']]);
  expect(recorded[0]!.data.retries).toMatchObject([{ attempt: 1, code: 'provider_network_error', status: null }]);
});
