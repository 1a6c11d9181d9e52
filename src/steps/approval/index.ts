import { defineStep } from '../define-step.js';
import { MAX_CHAT_TEXT } from '../chat-reply/index.js';
import { httpStep } from '../http/index.js';

/** One day (DESIGN.md "approval step"). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 86_400_000;
/** Thirty days: the longest an approval (or an agent tool's) waits. */
export const MAX_APPROVAL_TIMEOUT_MS = 2_592_000_000;
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
  \`{"data": {"decision": "approve" | "reject", "comment"?, "input"?}}\` (a build-scoped token);
  it answers the step's record (an \`execution-step\` document), or
- \`POST\` to the \`approve_url\` or \`reject_url\` of the waiting step's output: signed one-time
  links, valid until the time-out, to put in an email or a chat message. The body may be JSON
  \`{"comment"?, "input"?}\`; the answer is \`{"decision"}\`. A used or expired link is 410.

The first decision wins; any later one through the API is refused with 409.

**Config**

- \`message\`: what to decide (may hold \`{{ … }}\` expressions); notifications see it.
- \`timeout_ms\`: how long to wait for a decision, 1000 to 2592000000 (30 days); 86400000
  (1 day) by default.
- \`on_timeout\`: what the time-out does: \`fail\` (the default; the step fails with
  \`approval_timed_out\`), \`approve\` or \`reject\` (decided by \`timeout\`).
- \`notify\`: whom to tell when the step starts waiting: \`http\` (an http step's config, sent
  as that step sends it) and/or \`slack\` (\`{installation_id?, channel, text}\`, posted as the
  workspace's installed Slack bot; without \`installation_id\`, its only installation). Their
  expressions also see \`approval.approve_url\`, \`approval.reject_url\`,
  \`approval.expires_at\` and \`approval.message\`. A notification that fails does not stop the
  approval: the failure is written to the step's logs and the step waits on.

**Output**

While it waits: \`{approve_url, reject_url, expires_at}\`. Once decided:
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
      timeout_ms: { type: 'integer', minimum: MIN_APPROVAL_TIMEOUT_MS, maximum: MAX_APPROVAL_TIMEOUT_MS },
      on_timeout: { enum: [...APPROVAL_TIMEOUT_ACTIONS] },
      notify: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: {
          http: httpStep.configSchema,
          slack: {
            type: 'object',
            additionalProperties: false,
            required: ['channel', 'text'],
            properties: {
              installation_id: { type: 'string', minLength: 1, maxLength: 100 },
              channel: { type: 'string', minLength: 1, maxLength: 200 },
              text: { type: 'string', minLength: 1, maxLength: MAX_CHAT_TEXT },
            },
          },
        },
      },
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
  return typeof ms === 'number' && Number.isInteger(ms) && ms >= MIN_APPROVAL_TIMEOUT_MS && ms <= MAX_APPROVAL_TIMEOUT_MS
    ? ms
    : DEFAULT_APPROVAL_TIMEOUT_MS;
}

/** What the time-out does under a node's config (`fail` when absent). */
export function approvalTimeoutAction(config: Record<string, unknown>): ApprovalTimeoutAction {
  const action = config.on_timeout;
  return action === 'approve' || action === 'reject' ? action : 'fail';
}
