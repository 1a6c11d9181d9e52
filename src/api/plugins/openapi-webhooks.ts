/**
 * The inbound webhook endpoint in the OpenAPI document. Its route takes raw bodies and answers
 * what each node's response mode says, so it declares no Fastify schemas (they would also drive
 * serialisation); this path item describes it instead. docs/webhooks.md has the whole contract.
 */
const errorDocument = { $ref: '#/components/schemas/WebhookError' };
const errorResponse = (description: string) => ({ description, content: { 'application/vnd.api+json': { schema: errorDocument } } });

export const WEBHOOK_ERROR_SCHEMA = {
  type: 'object',
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: { status: { type: 'string' }, code: { type: 'string' }, title: { type: 'string' }, detail: { type: 'string' } },
      },
    },
    jsonapi: { type: 'object' },
  },
} as const;

const DELIVER = {
  tags: ['Inbound webhooks'],
  summary: "Deliver to a webhook node's endpoint",
  description:
    "One endpoint per webhook node; the id and URL are in the node's config in graph responses. Verified on the raw body before anything else: `Authorization: Bearer <webhook token>` (bearer), `X-Hub-Signature-256` (hmac github), `Stripe-Signature` (hmac stripe) or the node's own header (hmac plain). The body is any media type. Answers per the node's `response_mode`. `Idempotency-Key` / `X-GitHub-Delivery` repeat the first answer for 24 h (immediate mode).",
  security: [],
  parameters: [{ name: 'webhook_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
  requestBody: { required: false, content: { '*/*': { schema: {} } } },
  responses: {
    200: {
      description: "`last_step`: the execution's output as JSON; `respond_step`: the respond step's status, headers and body",
      content: { '*/*': { schema: {} } },
    },
    202: {
      description: '`immediate`: the execution was recorded; or the delivery was captured as a sample',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { ok: { type: 'boolean' }, execution_id: { type: 'string', format: 'uuid' }, captured: { type: 'boolean' } },
          },
        },
      },
    },
    400: errorResponse('the body does not parse as its declared type (`invalid_body`)'),
    401: errorResponse('the delivery is not authenticated; nothing is run'),
    404: errorResponse('no active webhook at this address (unknown and inactive answer the same bytes)'),
    413: errorResponse("the body is over the node's `max_body_bytes`"),
    429: errorResponse('over SWITCHYARD_WEBHOOK_RATE_LIMIT deliveries a minute from this address; see Retry-After'),
    500: errorResponse('the run failed before it answered (`webhook_run_failed`)'),
    503: errorResponse('the engine had no room in time (admission control); see Retry-After'),
    504: errorResponse("no answer within the node's `timeout_ms`; the run goes on (`webhook_timeout`)"),
  },
};

/** The endpoint takes the methods a node's `methods` allows; a GET has no body. */
export const WEBHOOK_PATH_ITEM = {
  post: structuredClone(DELIVER),
  put: structuredClone(DELIVER),
  patch: structuredClone(DELIVER),
  delete: structuredClone(DELIVER),
  get: (({ requestBody: _body, ...rest }) => rest)(structuredClone(DELIVER)),
};
