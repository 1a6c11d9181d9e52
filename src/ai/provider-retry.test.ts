import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort, startFakeProvider, type FakeProvider } from '../../test/support/fake-provider.js';
import { RunCancel } from '../lib/cancellation.js';
import { chat } from './chat-client.js';
import type { ChatOptions } from './chat-types.js';
import type { ResolvedConnection } from './connection-resolver.js';
import { ProviderError } from './provider-error.js';
import {
  DEFAULT_PROVIDER_RETRY,
  providerRetryWait,
  retryProviderCall,
  systemRetryWaits,
  type ProviderRetry,
  type RetryWaits,
} from './provider-retry.js';

const KEY = 'sk-retry-test-key-0000000000';
const NOW_MS = Date.parse('2026-03-01T12:00:00Z');
const OPTIONS: ChatOptions = { httpAllow: ['127.0.0.1'], nowMs: () => NOW_MS };
const HI = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
const limited = (retryAfter: string) => ({
  status: 429,
  headers: { 'retry-after': retryAfter },
  body: { error: { message: 'slow down' } },
});

/** Waits that only record what they were asked (no real sleeping), with jitter fixed by `random`. */
function recordedWaits(random = () => 0, onSleep: (ms: number) => void | Promise<void> = () => {}) {
  const slept: number[] = [];
  const waits: RetryWaits = {
    async sleep(ms) {
      slept.push(ms);
      await onSleep(ms);
    },
    random,
  };
  return { slept, waits };
}

const rejection = (promise: Promise<unknown>): Promise<ProviderError> =>
  promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(ProviderError);
      return error as ProviderError;
    },
  );

describe('provider retries', () => {
  let provider: FakeProvider;
  let openai: ResolvedConnection;
  let anthropic: ResolvedConnection;
  beforeAll(async () => {
    provider = await startFakeProvider();
    openai = { id: 'c1', provider: 'openai', baseUrl: provider.openAiBase, apiKey: KEY };
    anthropic = { id: 'c2', provider: 'anthropic', baseUrl: provider.origin, apiKey: KEY };
  });
  beforeEach(() => provider.reset());
  afterAll(() => provider.close());

  describe('the wait', () => {
    const error = (retryAfterMs: number | null) => new ProviderError('retryable', 'x', { status: 429, retryAfterMs });

    it("is the provider's Retry-After when it sent one, capped at 30 s", () => {
      expect(providerRetryWait(error(7000), 1, DEFAULT_PROVIDER_RETRY, () => 0.9)).toBe(7000);
      expect(providerRetryWait(error(0), 2, DEFAULT_PROVIDER_RETRY, () => 0.9)).toBe(0);
      expect(providerRetryWait(error(3_600_000), 1, DEFAULT_PROVIDER_RETRY, () => 0)).toBe(30_000);
    });

    it('is otherwise 0.5 s doubling per try, less up to a quarter at random, capped at 30 s', () => {
      expect(providerRetryWait(error(null), 1, DEFAULT_PROVIDER_RETRY, () => 0)).toBe(500);
      expect(providerRetryWait(error(null), 1, DEFAULT_PROVIDER_RETRY, () => 0.999)).toBe(375);
      expect(providerRetryWait(error(null), 2, DEFAULT_PROVIDER_RETRY, () => 0)).toBe(1000);
      expect(providerRetryWait(error(null), 2, DEFAULT_PROVIDER_RETRY, () => 0.5)).toBe(875);
      expect(providerRetryWait(error(null), 10, DEFAULT_PROVIDER_RETRY, () => 0)).toBe(30_000);
    });
  });

  it('tries a 429 again after its Retry-After (seconds) and returns the answer', async () => {
    provider.script('chat', limited('2'));
    const { slept, waits } = recordedWaits();
    const retries: ProviderRetry[] = [];
    const answer = await retryProviderCall(() => chat(openai, HI, OPTIONS), { waits, onRetry: (retry) => retries.push(retry) });
    expect(answer.text).toBe('ok');
    expect(slept).toEqual([2000]);
    expect(retries.map((r) => [r.attempt, r.error.code, r.waitMs])).toEqual([[1, 'provider_429', 2000]]);
    expect(provider.received('chat')).toHaveLength(2);
  });

  it('honours a Retry-After given as an HTTP date, and retry-after-ms', async () => {
    provider.script('chat', limited(new Date(NOW_MS + 5000).toUTCString()), {
      status: 429,
      headers: { 'retry-after-ms': '1250', 'retry-after': '9' },
      body: { error: { message: 'slow down' } },
    });
    const { slept, waits } = recordedWaits();
    expect((await retryProviderCall(() => chat(openai, HI, OPTIONS), { waits })).text).toBe('ok');
    expect(slept).toEqual([5000, 1250]);
  });

  it('waits at most 30 s however long the Retry-After, within a budget of 60 s', async () => {
    provider.script('chat', limited('3600'), limited('3600'));
    const { slept, waits } = recordedWaits();
    expect((await retryProviderCall(() => chat(openai, HI, OPTIONS), { waits })).text).toBe('ok');
    expect(slept).toEqual([30_000, 30_000]);
  });

  it('makes no wait that would pass the budget, and throws the last error as it was', async () => {
    provider.script('chat', limited('20'), limited('20'), limited('20'));
    const { slept, waits } = recordedWaits();
    const policy = { ...DEFAULT_PROVIDER_RETRY, maxAttempts: 10, maxTotalWaitMs: 45_000 };
    const error = await rejection(retryProviderCall(() => chat(openai, HI, OPTIONS), { waits, policy }));
    expect(error).toMatchObject({ code: 'provider_429', retryAfterMs: 20_000 });
    expect(slept).toEqual([20_000, 20_000]);
    expect(provider.received('chat')).toHaveLength(3);
  });

  it('tries 500 and 503 again with backoff, and an Anthropic 529', async () => {
    provider.script('chat', { status: 500, body: { error: { message: 'oops' } } }, { status: 503, body: { error: { message: 'busy' } } });
    const { slept, waits } = recordedWaits(() => 0);
    expect((await retryProviderCall(() => chat(openai, HI, OPTIONS), { waits })).text).toBe('ok');
    expect(slept).toEqual([500, 1000]);
    expect(provider.received('chat')).toHaveLength(3);

    provider.script('messages', { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    expect((await retryProviderCall(() => chat(anthropic, HI, OPTIONS), { waits })).text).toBe('ok');
    expect(provider.received('messages')).toHaveLength(2);
  });

  it('gives up after 3 tries in all', async () => {
    provider.script('chat', limited('1'), limited('1'), limited('4'));
    const { slept, waits } = recordedWaits();
    const error = await rejection(retryProviderCall(() => chat(openai, HI, OPTIONS), { waits }));
    expect(error).toMatchObject({ code: 'provider_429', retryAfterMs: 4000 });
    expect(slept).toEqual([1000, 1000]);
    expect(provider.received('chat')).toHaveLength(3);
  });

  it('tries a request that timed out again', async () => {
    provider.script('chat', { hang: true });
    const { slept, waits } = recordedWaits();
    const answer = await retryProviderCall(() => chat(openai, HI, { ...OPTIONS, timeoutMs: 200 }), { waits });
    expect(answer.text).toBe('ok');
    expect(slept).toEqual([500]);
    expect(provider.received('chat')).toHaveLength(2);
  });

  it('tries a refused connection again', async () => {
    const port = await freePort();
    const connection: ResolvedConnection = { id: 'c3', provider: 'openai_compatible', baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: KEY };
    let late: FakeProvider | null = null;
    const errors: string[] = [];
    // The provider comes up during the wait after the refused try.
    const { waits } = recordedWaits(
      () => 0,
      async () => {
        late ??= await startFakeProvider({ port });
      },
    );
    try {
      const answer = await retryProviderCall(() => chat(connection, HI, OPTIONS), {
        waits,
        onRetry: ({ error }) => errors.push(error.code),
      });
      expect(answer.text).toBe('ok');
      expect(errors).toEqual(['provider_network_error']);
      expect(late!.received('chat')).toHaveLength(1);
    } finally {
      await (late as FakeProvider | null)?.close();
    }
  });

  it('does not try 400, 401, 403, 404 or 422 again', async () => {
    for (const status of [400, 401, 403, 404, 422]) {
      provider.reset();
      provider.script('chat', { status, body: { error: { message: `refused with ${status}` } } });
      const { slept, waits } = recordedWaits();
      const error = await rejection(retryProviderCall(() => chat(openai, HI, OPTIONS), { waits }));
      expect(error).toMatchObject({ kind: 'rejected', code: `provider_${status}` });
      expect(slept).toEqual([]);
      expect(provider.received('chat')).toHaveLength(1);
    }
  });

  it('ends a real wait as soon as the step is cancelled, and tries nothing after it', async () => {
    provider.script('chat', limited('30'));
    const cancel = new RunCancel();
    const started = Date.now();
    const call = retryProviderCall(() => chat(openai, HI, OPTIONS), {
      waits: systemRetryWaits,
      cancel,
      onRetry: () => setTimeout(() => cancel.abort(), 50),
    });
    expect(await rejection(call)).toMatchObject({ code: 'provider_429' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(provider.received('chat')).toHaveLength(1);
  });

  it('does not retry a call that failed because it was cancelled', async () => {
    provider.script('chat', { hang: true });
    const cancel = new RunCancel();
    const { slept, waits } = recordedWaits();
    const call = retryProviderCall(() => chat(openai, HI, { ...OPTIONS, signal: cancel.signal }), { waits, cancel });
    setTimeout(() => cancel.abort(), 50);
    await rejection(call);
    expect(slept).toEqual([]);
    expect(provider.received('chat')).toHaveLength(1);
  });
});
