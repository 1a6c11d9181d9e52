import type { Cancellation } from '../lib/cancellation.js';
import { ProviderError } from './provider-error.js';

/**
 * Retries of one provider call inside the caller's work, the way the official OpenAI and
 * Anthropic SDKs retry when used directly (their own retries stay off, `maxRetries: 0`: they
 * sleep on a timer no test can skip and no cancel can end, and they would retry under the
 * background loop's own durable retries of embeddings and summaries).
 *
 * Only `retryable` ProviderErrors are tried again (429, 408, 409, 5xx, time-outs, connection
 * failures); a 4xx that says the request is wrong fails at once. The wait is the provider's
 * `Retry-After` when it sent one, else exponential backoff with jitter; no wait is longer than
 * `maxWaitMs`, and the waits of one call together stay within `maxTotalWaitMs`, so a call holds
 * its caller (an agent step holds its execution's slot) for a bounded time. A cancel ends a
 * wait at once and nothing is tried after it.
 */
export interface ProviderRetryPolicy {
  /** Tries in all, the first included. */
  maxAttempts: number;
  /** The first backoff without a Retry-After; each later one doubles. */
  initialBackoffMs: number;
  /** The longest single wait, whatever the provider's Retry-After asks. */
  maxWaitMs: number;
  /** The waits of one call together; a wait that would pass it is not made and the error stands. */
  maxTotalWaitMs: number;
}

/**
 * The SDKs' defaults (openai 6.30, @anthropic-ai/sdk 1.13: 3 tries, backoff 0.5 s doubling with
 * up to a quarter off at random), with a cap they lack: they follow any Retry-After, so one of
 * an hour would hold the step, its slot and its lease for an hour. Here a wait is at most 30 s
 * (a 429 asking for a minute is tried at 30 s and at 60 s) and the waits of a call at most 60 s:
 * two waits of 30 s meet it exactly; the budget is what bounds a policy with more attempts.
 */
export const DEFAULT_PROVIDER_RETRY: Readonly<ProviderRetryPolicy> = Object.freeze({
  maxAttempts: 3,
  initialBackoffMs: 500,
  maxWaitMs: 30_000,
  maxTotalWaitMs: 60_000,
});

/** What a retry's wait needs of a cancellation (the step's `cancel`). */
export type RetryCancel = Pick<Cancellation, 'aborted' | 'onAbort'>;

/** How waits happen: real timers, or (tests) a sleep that moves a manual clock. */
export interface RetryWaits {
  /** Resolves after `ms`, or as soon as `cancel` aborts. */
  sleep(ms: number, cancel: RetryCancel | undefined): Promise<void>;
  /** A number in [0, 1) for the jitter. */
  random(): number;
}

/**
 * Real timers. A timer, not a held thread: the event loop serves everything else meanwhile. Not
 * unref'd: a one-shot CLI run waiting to retry must not exit with the call unfinished.
 */
export const systemRetryWaits: RetryWaits = {
  sleep(ms, cancel) {
    return new Promise<void>((resolve) => {
      if (cancel?.aborted || ms <= 0) return resolve();
      let stopListening: () => void = () => {};
      const timer = setTimeout(() => {
        stopListening();
        resolve();
      }, ms);
      stopListening =
        cancel?.onAbort(() => {
          clearTimeout(timer);
          resolve();
        }) ?? stopListening;
    });
  },
  random: () => Math.random(),
};

/** One failed try that is followed by another, as the caller may record it. */
export interface ProviderRetry {
  /** The try that failed, from 1. */
  attempt: number;
  error: ProviderError;
  /** The wait before the next try. */
  waitMs: number;
}

/**
 * The wait before try `attempt + 1` after `error`: its Retry-After, else the backoff of that try
 * (`initialBackoffMs * 2^(attempt-1)`, less up to a quarter of it at random, so callers limited
 * together do not come back together), never more than `maxWaitMs`.
 */
export function providerRetryWait(error: ProviderError, attempt: number, policy: ProviderRetryPolicy, random: () => number): number {
  const wanted = error.retryAfterMs ?? policy.initialBackoffMs * 2 ** (attempt - 1) * (1 - 0.25 * random());
  return Math.round(Math.min(Math.max(0, wanted), policy.maxWaitMs));
}

/**
 * Runs `call`, trying it again after retryable ProviderErrors within `policy`. Throws the last
 * error as it was (with its Retry-After, for a caller that retries durably on top).
 */
export async function retryProviderCall<T>(
  call: () => Promise<T>,
  options: {
    policy?: ProviderRetryPolicy;
    waits?: RetryWaits;
    cancel?: RetryCancel;
    onRetry?: (retry: ProviderRetry) => void;
  } = {},
): Promise<T> {
  const policy = options.policy ?? DEFAULT_PROVIDER_RETRY;
  const waits = options.waits ?? systemRetryWaits;
  let waited = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof ProviderError) || !error.retryable || attempt >= policy.maxAttempts || options.cancel?.aborted) throw error;
      const waitMs = providerRetryWait(error, attempt, policy, waits.random);
      if (waited + waitMs > policy.maxTotalWaitMs) throw error;
      options.onRetry?.({ attempt, error, waitMs });
      await waits.sleep(waitMs, options.cancel);
      if (options.cancel?.aborted) throw error;
      waited += waitMs;
    }
  }
}
