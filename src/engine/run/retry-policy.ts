import type { RetryPolicy } from '../../graph/graph-types.js';
import type { SerializedStepError } from '../step-errors.js';

/**
 * Milliseconds until the next attempt, or null when the step must fail now: the error is not
 * retryable, the node has no retry policy, or its attempts are used up. A RetryAfterError's own
 * delay wins over the backoff; exponential backoff doubles per attempt up to max_backoff_ms.
 */
export function nextRetryDelay(policy: RetryPolicy | undefined, attempt: number, error: SerializedStepError): number | null {
  if (!error.retryable || !policy || attempt >= policy.max_attempts) return null;
  if (error.retry_after_ms !== null) return error.retry_after_ms;
  const base = policy.backoff === 'exponential' ? policy.backoff_ms * 2 ** (attempt - 1) : policy.backoff_ms;
  return policy.max_backoff_ms === undefined ? base : Math.min(base, policy.max_backoff_ms);
}
