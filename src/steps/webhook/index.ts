import { defineStep } from '../define-step.js';

export const WEBHOOK_RESPONSE_MODES = ['immediate', 'last_step', 'respond_step'] as const;
export const WEBHOOK_HMAC_FORMATS = ['github', 'stripe', 'plain'] as const;

/**
 * Assigned by the service and echoed in graph responses. The schema accepts them so a graph
 * read from the API can be written back unchanged; the service must overwrite them rather than
 * trust what a client sent.
 */
export const WEBHOOK_READ_ONLY_FIELDS = ['webhook_id', 'webhook_url', 'webhook_unauthenticated'] as const;

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

export const MAX_WEBHOOK_TIMEOUT_MS = 300_000;
/** The server maximum of `max_body_bytes`. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

export const webhookStep = defineStep({
  slug: 'webhook',
  name: 'Webhook',
  description: 'Starts the workflow when an HTTP request arrives at its URL.',
  docs: `Starts an execution for every request delivered to the node's webhook URL,
\`{base_url}/webhooks/<webhook_id>\`. The URL and \`webhook_id\` are assigned by the service when
the workflow is saved, are read-only, and stay the same across graph edits. Deliveries start
executions only while the workflow is active, on its activated snapshot; unknown and inactive
endpoints answer the same 404.

**Config**

- \`response_mode\`: \`immediate\` (default) answers 202 \`{ok, execution_id}\` once the execution is
  recorded; \`last_step\` waits and answers with the output of the last step; \`respond_step\`
  answers with what a *Respond to Webhook* step sends, while the run goes on.
- \`verification\`: how a delivery proves where it came from, checked on the raw body before
  anything else (401 otherwise). \`{"method": "bearer"}\` (default) requires the token minted when
  the node is first saved (shown once in the save's \`webhook_tokens\`; rotate it with
  \`POST /api/v1/workflows/:id/webhooks/:node_id/rotate\`). \`{"method": "hmac", "format": …,
  "secret": "…"}\` checks a signature as GitHub (\`github\`) or Stripe (\`stripe\`) sign
  deliveries, or a hex HMAC-SHA256 in the header named by \`header\` (\`plain\`, which requires
  it); the secret is write-only: required once, never returned, kept when a save omits it.
  \`{"method": "none"}\` accepts anyone and must be chosen explicitly.
- \`timeout_ms\`: how long a synchronous caller waits (1 to 300000, default 30000); past it the
  caller gets 504 and the run continues.
- \`max_body_bytes\`: largest accepted body (default 1 MiB, at most 16 MiB); larger gets 413.

A delivery with an \`Idempotency-Key\` (or \`X-GitHub-Delivery\`) seen in the last 24 hours gets
the first delivery's answer (immediate mode). The next delivery can be captured as a sample
instead of run (\`POST /api/v1/workflows/:id/webhooks/:node_id/capture\`). Details:
docs/webhooks.md.

**Output**

The trigger payload \`{method, headers, query, body}\`, credential headers removed. JSON and
form bodies arrive parsed, text as a string, anything else as
\`{content_type, encoding: "base64", data}\`.`,
  categories: ['start'],
  icon: 'webhook',
  iconColor: '#7C3AED',
  trigger: true,
  ports: { in: [], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      response_mode: { enum: [...WEBHOOK_RESPONSE_MODES] },
      verification: {
        type: 'object',
        required: ['method'],
        discriminator: { propertyName: 'method' },
        oneOf: [
          { properties: { method: { const: 'bearer' } }, additionalProperties: false },
          {
            properties: {
              method: { const: 'hmac' },
              format: { enum: [...WEBHOOK_HMAC_FORMATS] },
              header: { type: 'string', minLength: 1 },
              secret: { type: 'string', minLength: 1 },
            },
            // Write-only: required the first time (the service checks), then kept when omitted.
            required: ['format'],
            additionalProperties: false,
            if: { properties: { format: { const: 'plain' } }, required: ['format'] },
            then: { required: ['header'] },
          },
          { properties: { method: { const: 'none' } }, additionalProperties: false },
        ],
      },
      timeout_ms: { type: 'integer', minimum: 1, maximum: MAX_WEBHOOK_TIMEOUT_MS },
      max_body_bytes: { type: 'integer', minimum: 1, maximum: MAX_BODY_BYTES },
      webhook_id: { type: 'string' },
      webhook_url: { type: 'string' },
      webhook_unauthenticated: { type: 'boolean' },
    },
  },
  defaultConfig: {
    response_mode: 'immediate',
    verification: { method: 'bearer' },
    timeout_ms: DEFAULT_WEBHOOK_TIMEOUT_MS,
    max_body_bytes: DEFAULT_MAX_BODY_BYTES,
  },
  outputSchema: {
    type: 'object',
    required: ['method', 'headers', 'query', 'body'],
    properties: {
      method: { type: 'string' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      query: { type: 'object' },
      body: {},
    },
  },
  sortOrder: 10,
  canvasVisible: true,
});
