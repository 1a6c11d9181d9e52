import { escapePointerToken } from '../lib/json-pointer.js';
import { RETRY_BACKOFFS, type GraphViolation, type RetryPolicy, type RetryBackoff } from './graph-types.js';

/**
 * 25 attempts with exponential backoff already spans days; a day is the longest wait between
 * attempts that still reads as "retry" rather than "schedule".
 */
export const RETRY_LIMITS = Object.freeze({
  maxAttempts: 25,
  maxBackoffMs: 86_400_000,
});

const RETRY_FIELDS = ['max_attempts', 'backoff_ms', 'backoff', 'max_backoff_ms'];

/** Validates a node's `retry`; messages are part of the API (tests assert them verbatim). */
export function parseRetry(raw: unknown, pointer: string): { retry: RetryPolicy | null; violations: GraphViolation[] } {
  const violations: GraphViolation[] = [];
  const fail = (field: string | null, detail: string) =>
    violations.push({ pointer: field === null ? pointer : `${pointer}/${field}`, code: 'invalid_retry', detail });

  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    fail(null, 'retry must be an object with max_attempts, backoff_ms and backoff.');
    return { retry: null, violations };
  }
  const r = raw as Record<string, unknown>;
  for (const field of ['max_attempts', 'backoff_ms', 'backoff']) {
    if (r[field] === undefined) fail(field, `retry.${field} is required.`);
  }

  const maxAttempts = r.max_attempts;
  if (maxAttempts !== undefined && !isIntegerIn(maxAttempts, 1, RETRY_LIMITS.maxAttempts)) {
    fail('max_attempts', `retry.max_attempts must be an integer from 1 to ${RETRY_LIMITS.maxAttempts}.`);
  }
  const backoffMs = r.backoff_ms;
  const backoffMsValid = isIntegerIn(backoffMs, 0, RETRY_LIMITS.maxBackoffMs);
  if (backoffMs !== undefined && !backoffMsValid) {
    fail('backoff_ms', `retry.backoff_ms must be an integer from 0 to ${RETRY_LIMITS.maxBackoffMs}.`);
  }
  const backoff = r.backoff;
  if (backoff !== undefined && !RETRY_BACKOFFS.includes(backoff as RetryBackoff)) {
    fail('backoff', 'retry.backoff must be "fixed" or "exponential".');
  }
  const maxBackoffMs = r.max_backoff_ms;
  if (maxBackoffMs !== undefined) {
    const lower = backoffMsValid ? (backoffMs as number) : 0;
    if (!isIntegerIn(maxBackoffMs, lower, RETRY_LIMITS.maxBackoffMs)) {
      const from = backoffMsValid ? `${lower} (backoff_ms)` : '0';
      fail('max_backoff_ms', `retry.max_backoff_ms must be an integer from ${from} to ${RETRY_LIMITS.maxBackoffMs}.`);
    }
  }
  for (const field of Object.keys(r)) {
    if (!RETRY_FIELDS.includes(field)) fail(escapePointerToken(field), `retry.${field} is not a known field.`);
  }

  if (violations.length > 0) return { retry: null, violations };
  const retry: RetryPolicy = {
    max_attempts: maxAttempts as number,
    backoff_ms: backoffMs as number,
    backoff: backoff as RetryBackoff,
  };
  if (maxBackoffMs !== undefined) retry.max_backoff_ms = maxBackoffMs as number;
  return { retry, violations };
}

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}
