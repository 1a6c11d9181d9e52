import { describe, expect, it } from 'vitest';
import { nextRetryDelay } from './retry-policy.js';
import type { SerializedStepError } from '../step-errors.js';

const retryable: SerializedStepError = { name: 'StepError', code: 'step_failed', message: 'x', retryable: true, retry_after_ms: null };

describe('nextRetryDelay', () => {
  it('fails at once without a policy, for a non-retryable error, or when attempts are used up', () => {
    expect(nextRetryDelay(undefined, 1, retryable)).toBeNull();
    expect(nextRetryDelay({ max_attempts: 3, backoff_ms: 10, backoff: 'fixed' }, 1, { ...retryable, retryable: false })).toBeNull();
    expect(nextRetryDelay({ max_attempts: 3, backoff_ms: 10, backoff: 'fixed' }, 3, retryable)).toBeNull();
  });

  it('waits the fixed backoff, or doubles it per attempt up to the cap', () => {
    expect(nextRetryDelay({ max_attempts: 5, backoff_ms: 100, backoff: 'fixed' }, 2, retryable)).toBe(100);
    const exponential = { max_attempts: 6, backoff_ms: 100, backoff: 'exponential' as const, max_backoff_ms: 500 };
    expect([1, 2, 3, 4, 5].map((attempt) => nextRetryDelay(exponential, attempt, retryable))).toEqual([100, 200, 400, 500, 500]);
  });

  it('uses a RetryAfterError delay over the backoff', () => {
    expect(nextRetryDelay({ max_attempts: 3, backoff_ms: 100, backoff: 'fixed' }, 1, { ...retryable, retry_after_ms: 7000 })).toBe(7000);
  });
});
