import { defineStep } from '../define-step.js';
import { stringMapSchema } from '../expression-schema.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

export const httpStep = defineStep({
  slug: 'http',
  name: 'HTTP Request',
  description: 'Calls a URL and passes on the status, headers and body of the response.',
  docs: `Sends one HTTP request. Requests to private, loopback and link-local addresses are refused
after DNS resolution unless the host is in \`SWITCHYARD_HTTP_ALLOW\`.

**Config**

- \`method\`: \`GET\` (default), \`POST\`, \`PUT\`, \`PATCH\`, \`DELETE\`, \`HEAD\` or \`OPTIONS\`.
- \`url\` (required): the address; may hold \`{{ … }}\` expressions.
- \`headers\`, \`query\`: objects of strings; values may hold expressions.
- \`body\`: any JSON value, sent as JSON; a string that is one expression sends its result.
- \`timeout_ms\`: 1 to 300000, default 30000.

**Output**

\`{status, headers, body}\`. With
\`on_error: "continue"\` a failed request leaves through the \`error\` port instead of failing
the execution.`,
  categories: ['fetch'],
  icon: 'globe',
  iconColor: '#2563EB',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      method: { enum: [...HTTP_METHODS] },
      url: { type: 'string', minLength: 1 },
      headers: stringMapSchema,
      query: stringMapSchema,
      body: {},
      timeout_ms: { type: 'integer', minimum: 1, maximum: 300_000 },
    },
  },
  defaultConfig: { method: 'GET', headers: {}, query: {}, timeout_ms: 30_000 },
  outputSchema: {
    type: 'object',
    required: ['status', 'headers', 'body'],
    properties: {
      status: { type: 'integer' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: {},
    },
  },
  sortOrder: 20,
  canvasVisible: true,
});
