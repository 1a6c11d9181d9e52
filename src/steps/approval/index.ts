import { defineStep } from '../define-step.js';
import { MAX_WAIT_MS } from '../wait/index.js';

/** Seven days: long enough for a person away for a weekend, short enough that forgotten runs end. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 604_800_000;
/** One second: a shorter time-out could not be met by any person. */
export const MIN_APPROVAL_TIMEOUT_MS = 1_000;
export const APPROVAL_TIMEOUT_ACTIONS = ['fail', 'approve', 'reject'] as const;
export type ApprovalTimeoutAction = (typeof APPROVAL_TIMEOUT_ACTIONS)[number];

/**
 * Run by the engine itself (engine/run/approval-runner.ts): the step's row waits until a
 * decision or its time-out, holding no worker, so it has no runtime here.
 */
export const approvalStep = defineStep({
  slug: 'approval',
  name: 'Approval',
  description: 'Stops the execution until a person approves or rejects it, then leaves by approved or rejected.',
  docs: `Stops the execution until a person decides. The step's record and the execution wait
(holding no worker, surviving restarts) until a decision comes or the time-out passes.

**Deciding**

- \`POST /api/v1/executions/{id}/steps/{step_id}/decision\` with
  \`{"data": {"decision": "approve" | "reject", "comment"?, "input"?}}\` (a build-scoped token), or
- \`POST\` to the \`approve_url\` or \`reject_url\` of the waiting step's output: signed one-time
  links, valid until the time-out, to put in an email or a chat message.

The first decision wins; any later one is refused with 409.

**Config**

- \`message\`: what to decide, shown in the waiting output (may hold \`{{ … }}\` expressions).
- \`timeout_ms\`: how long to wait for a decision, 1000 to 31536000000 (365 days); 604800000
  (7 days) by default.
- \`on_timeout\`: what the time-out does: \`fail\` (the default; the step fails with
  \`approval_timed_out\`), \`approve\` or \`reject\` (decided by \`timeout\`).

**Output**

While it waits: \`{message, approve_url, reject_url, expires_at}\`. Once decided:
\`{decision, comment, input, decided_at, decided_by}\`, leaving by \`approved\` or \`rejected\`;
\`decided_by\` is the user's id, \`url\` for a link, or \`timeout\`.`,
  categories: ['decide'],
  icon: 'user-check',
  iconColor: '#0D9488',
  trigger: false,
  ports: { in: ['in'], out: ['approved', 'rejected'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['message'],
    properties: {
      message: { type: 'string', minLength: 1, maxLength: 10_000 },
      timeout_ms: { type: 'integer', minimum: MIN_APPROVAL_TIMEOUT_MS, maximum: MAX_WAIT_MS },
      on_timeout: { enum: [...APPROVAL_TIMEOUT_ACTIONS] },
    },
  },
  defaultConfig: { message: 'Approve or reject this step.', timeout_ms: DEFAULT_APPROVAL_TIMEOUT_MS, on_timeout: 'fail' },
  outputSchema: {
    type: 'object',
    properties: {
      decision: { enum: ['approve', 'reject'] },
      comment: { type: ['string', 'null'] },
      input: {},
      decided_at: { type: 'string', description: 'RFC 3339 timestamp' },
      decided_by: { type: 'string' },
    },
  },
  sortOrder: 125,
  canvasVisible: true,
});

/** The port a decision leaves by. */
export function approvalPort(decision: 'approve' | 'reject'): 'approved' | 'rejected' {
  return decision === 'approve' ? 'approved' : 'rejected';
}

/** The time-out a node's config sets (the default when absent). */
export function approvalTimeoutMs(config: Record<string, unknown>): number {
  const ms = config.timeout_ms;
  return typeof ms === 'number' && Number.isInteger(ms) && ms >= MIN_APPROVAL_TIMEOUT_MS && ms <= MAX_WAIT_MS
    ? ms
    : DEFAULT_APPROVAL_TIMEOUT_MS;
}

/** What the time-out does under a node's config (`fail` when absent). */
export function approvalTimeoutAction(config: Record<string, unknown>): ApprovalTimeoutAction {
  const action = config.on_timeout;
  return action === 'approve' || action === 'reject' ? action : 'fail';
}
