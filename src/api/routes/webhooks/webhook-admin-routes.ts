import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiContext } from '../../api-context.js';
import { actionBodySchema, ERROR_RESPONSE_SCHEMA } from '../../jsonapi/resource-schemas.js';
import { actorOf } from '../workflows/workflow-routes.js';

type NodeRequest = FastifyRequest<{ Params: { id: string; node_id: string } }>;

const PARAMS = {
  type: 'object',
  required: ['id', 'node_id'],
  properties: {
    id: { type: 'string', description: 'workflow UUID' },
    node_id: { type: 'string', description: "the webhook node's id in the graph" },
  },
} as const;
const errors = { 401: ERROR_RESPONSE_SCHEMA, 403: ERROR_RESPONSE_SCHEMA, 404: ERROR_RESPONSE_SCHEMA, 422: ERROR_RESPONSE_SCHEMA };
const tags = ['Webhooks'];

const TOKEN_SCHEMA = {
  description: 'plain JSON (application/json): the new bearer token, shown only here; the old one no longer works',
  type: 'object',
  properties: { token: { type: 'string' }, webhook_id: { type: 'string', format: 'uuid' }, webhook_url: { type: 'string' } },
};
const CAPTURE_SCHEMA = {
  description: 'plain JSON (application/json): the capture state and the last captured delivery',
  type: 'object',
  properties: {
    webhook_id: { type: 'string', format: 'uuid' },
    capturing: { type: 'boolean', description: 'the next authenticated delivery will be recorded (202 {ok, captured}), not run' },
    payload: { description: 'the last captured trigger payload {method, headers, query, body}, or null', nullable: true },
    shape: {
      description: "a JSON-Schema-like description of that payload, usable as the step's sample output shape",
      nullable: true,
      type: 'object',
      additionalProperties: true,
    },
    captured_at: { type: 'string', format: 'date-time', nullable: true },
  },
};

/** The webhook endpoint actions of the API (DESIGN.md: rotation and sample capture routes). */
export async function webhookAdminRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.post(
    '/workflows/:id/webhooks/:node_id/rotate',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: "Rotate a webhook node's bearer token (the old one stops working at once)",
        params: PARAMS,
        body: actionBodySchema(),
        response: { 200: TOKEN_SCHEMA, ...errors },
      },
    },
    async (request: NodeRequest, reply) =>
      reply.type('application/json').send(await ctx.webhooks.rotate(actorOf(request), request.params.id, request.params.node_id)),
  );

  app.post(
    '/workflows/:id/webhooks/:node_id/capture',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'Capture the next authenticated delivery as a sample, even while the workflow is inactive',
        params: PARAMS,
        body: actionBodySchema(),
        response: { 200: CAPTURE_SCHEMA, ...errors },
      },
    },
    async (request: NodeRequest, reply) =>
      reply.type('application/json').send(await ctx.webhooks.startCapture(actorOf(request), request.params.id, request.params.node_id)),
  );

  app.get(
    '/workflows/:id/webhooks/:node_id/capture',
    {
      config: { plainJson: true },
      schema: { tags, summary: 'The last captured delivery and its shape', params: PARAMS, response: { 200: CAPTURE_SCHEMA, ...errors } },
    },
    async (request: NodeRequest, reply) =>
      reply.type('application/json').send(await ctx.webhooks.capture(actorOf(request), request.params.id, request.params.node_id)),
  );
}
