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
- \`body\`: any JSON value, sent as JSON (with \`Content-Type: application/json\` unless a
  content type is given); a string is sent as it is.
- \`timeout_ms\`: 1 to 300000, default 30000.

Credentials in the URL are sent as Basic auth. Up to 5 redirects are followed, each checked by
the guard; Authorization and Cookie are dropped when a redirect leaves the origin.

**Output**

\`{status, headers, body}\`: header names in lower case, \`set-cookie\` as a list. A JSON body
is parsed, a text body is a string, anything else is \`{base64, content_type}\`; an empty body is
null. Responses over 10 MiB fail the step. A 4xx fails it without retries (a 429 retries, and
429 and 503 wait for their Retry-After); a 5xx or a network error can be retried. With
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
      // A string per header (repeats joined with ", "), except set-cookie: a list, since cookies cannot be joined.
      headers: { type: 'object', additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] } },
      body: {},
    },
  },
  sortOrder: 20,
  canvasVisible: true,
  effects: true,
});
