import { NonRetriableError } from '../../engine/step-errors.js';
import { parseTimestampMicros } from '../../lib/clock.js';
import { defineStep } from '../define-step.js';
import type { ConfigIssue } from '../describe-config-errors.js';
import { orExpression } from '../expression-schema.js';

/** 365 days: a longer pause is more likely a unit mistake than a plan. */
export const MAX_WAIT_MS = 31_536_000_000;

/** Run by the engine itself (the execution parks until the time comes), so it has no runtime here. */
export const waitStep = defineStep({
  checkConfig: (config) => waitConfigIssues(config),
  slug: 'wait',
  name: 'Wait',
  description: 'Pauses the execution for a while or until a moment, then passes its input on.',
  docs: `Pauses the execution without holding a worker: it is stored as waiting and resumed when
the time comes, even after a restart.

**Config** (exactly one of)

- \`duration_ms\`: how long to wait, 0 to 31536000000 (365 days), or one \`{{ … }}\`
  expression yielding it.
- \`until\`: an RFC 3339 timestamp such as \`"2026-05-01T09:00:00Z"\`, or an expression
  yielding one (\`"{{ trigger.body.remind_at }}"\`). A moment already past does not wait.

**Output**

The input, unchanged.`,
  categories: ['decide'],
  icon: 'hourglass',
  iconColor: '#4F46E5',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    // "Exactly one of" is checked by `waitConfigIssues`: the schema forms for it (oneOf, not)
    // would be reported as "config must NOT be valid".
    properties: {
      duration_ms: orExpression({ type: 'integer', minimum: 0, maximum: MAX_WAIT_MS }),
      // Any string: an interpolated one ("{{ date }}T09:00:00Z") is only known at run time.
      until: { type: 'string', minLength: 1 },
    },
  },
  defaultConfig: {},
  outputSchema: null,
  sortOrder: 120,
  canvasVisible: true,
});

/** Exactly one of `duration_ms` and `until`. */
export function waitConfigIssues(config: Record<string, unknown>): ConfigIssue[] {
  const hasDuration = config.duration_ms !== undefined;
  const hasUntil = config.until !== undefined;
  if (hasDuration && hasUntil) {
    return [{ pointer: '/until', detail: 'config.until cannot be given together with config.duration_ms; keep one of them.' }];
  }
  if (!hasDuration && !hasUntil) return [{ pointer: '', detail: 'config.duration_ms or config.until is required.' }];
  return [];
}

/**
 * When a wait node with this (resolved) config should resume, in ms since the epoch; never
 * before `nowMs`. Throws `NonRetriableError` (`invalid_config`) when an expression yielded
 * something that is not a duration or a timestamp.
 */
export function waitUntil(config: Record<string, unknown>, nowMs: number): number {
  const issue = waitConfigIssues(config)[0];
  if (issue !== undefined) throw invalid(issue.detail, issue.pointer === '' ? 'config' : 'config.until');
  if (config.duration_ms !== undefined) {
    const ms = config.duration_ms;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_WAIT_MS) {
      throw invalid(
        `config.duration_ms must be a number of milliseconds from 0 to ${MAX_WAIT_MS}; it is ${show(ms)}.`,
        'config.duration_ms',
      );
    }
    // An expression may compute a fraction; rounding up never resumes early.
    return nowMs + Math.ceil(ms);
  }
  const until = config.until;
  const micros = typeof until === 'string' ? parseTimestampMicros(until.trim()) : null;
  if (micros === null) {
    throw invalid(`config.until must be an RFC 3339 timestamp such as "2026-05-01T09:00:00Z"; it is ${show(until)}.`, 'config.until');
  }
  return Math.max(nowMs, Math.ceil(micros / 1000));
}

function invalid(message: string, field: string): NonRetriableError {
  return new NonRetriableError(message, { code: 'invalid_config', details: { field } });
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? 'missing';
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
