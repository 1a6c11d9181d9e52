import { defineStep } from '../define-step.js';

export const WEBHOOK_RESPONSE_MODES = ['immediate', 'last_step', 'respond_step'] as const;
export const WEBHOOK_HMAC_FORMATS = ['github', 'stripe', 'plain'] as const;

/**
 * Assigned by the service and echoed in graph responses. The schema accepts them so a graph
 * read from the API can be written back unchanged; the service must overwrite them rather than
 * trust what a client sent.
 */
export const WEBHOOK_READ_ONLY_FIELDS = ['webhook_id', 'webhook_url'] as const;

const MAX_TIMEOUT_MS = 300_000;
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export const webhookStep = defineStep({
  slug: 'webhook',
  name: 'Webhook',
  description: 'Starts the workflow when an HTTP request arrives at its URL.',
  docs: `Starts an execution for every request delivered to the node's webhook URL. The URL and
\`webhook_id\` are assigned by the service when the workflow is saved and are read-only.

**Config**

- \`response_mode\`: \`immediate\` (default) answers as soon as the execution is recorded;
  \`last_step\` answers with the output of the last step; \`respond_step\` answers with what a
  *Respond to Webhook* step sends.
- \`verification\`: how a delivery proves where it came from. \`{"method": "bearer"}\` (default)
  requires the token minted when the node is first saved. \`{"method": "hmac", "format": …,
  "secret": "…"}\` checks a signature as GitHub (\`github\`) or Stripe (\`stripe\`) sign
  deliveries, or one carried in the header named by \`header\` (\`plain\`, which requires it).
  \`{"method": "none"}\` accepts anyone and must be chosen explicitly.
- \`timeout_ms\`: how long a synchronous caller waits (1 to 300000, default 30000); past it the
  caller gets 504 and the run continues.
- \`max_body_bytes\`: largest accepted body (default 1 MiB, at most 16 MiB); larger gets 413.

**Output**

The trigger payload \`{method, headers, query, body}\`.`,
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
            required: ['format', 'secret'],
            additionalProperties: false,
            if: { properties: { format: { const: 'plain' } }, required: ['format'] },
            then: { required: ['header'] },
          },
          { properties: { method: { const: 'none' } }, additionalProperties: false },
        ],
      },
      timeout_ms: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_MS },
      max_body_bytes: { type: 'integer', minimum: 1, maximum: MAX_BODY_BYTES },
      webhook_id: { type: 'string' },
      webhook_url: { type: 'string' },
    },
  },
  defaultConfig: {
    response_mode: 'immediate',
    verification: { method: 'bearer' },
    timeout_ms: 30_000,
    max_body_bytes: 1_048_576,
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
