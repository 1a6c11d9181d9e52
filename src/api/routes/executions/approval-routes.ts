import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiContext } from '../../api-context.js';
import { readActionData } from '../../jsonapi/request-document.js';
import { actionBodySchema, ERROR_RESPONSE_SCHEMA } from '../../jsonapi/resource-schemas.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { MAX_APPROVAL_COMMENT_LENGTH } from '../../../services/executions/approval-service.js';

const DECISION_RESPONSE = {
  description: 'plain JSON (application/json): the decision recorded; the execution resumes and the step leaves by approved or rejected',
  type: 'object',
  required: ['execution_id', 'step_id', 'decision', 'comment', 'input', 'decided_at', 'decided_by'],
  properties: {
    execution_id: { type: 'string' },
    step_id: { type: 'string' },
    decision: { type: 'string', enum: ['approve', 'reject'] },
    comment: { type: ['string', 'null'] },
    input: { description: 'the JSON value given with the decision (null when none)' },
    decided_at: { type: 'string', format: 'date-time' },
    decided_by: { type: 'string', description: 'the deciding user\'s id, or "url" for a signed link' },
  },
  additionalProperties: false,
} as const;

const DECISION_MEMBERS = {
  decision: { type: 'string', enum: ['approve', 'reject'] },
  comment: { type: ['string', 'null'], maxLength: MAX_APPROVAL_COMMENT_LENGTH, description: 'a note kept with the decision' },
  input: { description: "any JSON value, passed on in the step's output" },
};

const STEP_PARAMS = {
  type: 'object',
  required: ['id', 'step_id'],
  properties: { id: { type: 'string', description: 'UUID' }, step_id: { type: 'string', description: 'UUID of the waiting step record' } },
} as const;

const LINK_ERROR = {
  description: ERROR_RESPONSE_SCHEMA.description,
  content: { 'application/vnd.api+json': { schema: ERROR_RESPONSE_SCHEMA } },
};

const TOKEN_PARAMS = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', description: 'the signed token of an approve_url or reject_url' } },
} as const;

/** `POST /executions/:id/steps/:step_id/decision` (in the /api/v1 scope: a build-scoped token). */
export async function approvalRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.post(
    '/executions/:id/steps/:step_id/decision',
    {
      config: { plainJson: true },
      schema: {
        tags: ['Executions'],
        summary: 'Approve or reject a waiting approval step (the first decision wins; a later one is 409)',
        params: STEP_PARAMS,
        body: actionBodySchema(DECISION_MEMBERS, ['decision']),
        response: {
          200: DECISION_RESPONSE,
          400: ERROR_RESPONSE_SCHEMA,
          401: ERROR_RESPONSE_SCHEMA,
          403: ERROR_RESPONSE_SCHEMA,
          404: ERROR_RESPONSE_SCHEMA,
          409: ERROR_RESPONSE_SCHEMA,
          422: ERROR_RESPONSE_SCHEMA,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string; step_id: string } }>, reply) => {
      const data = readActionData(request.body);
      const answer = await ctx.approvals.decide(actorOf(request), request.params.id, request.params.step_id, data);
      return reply.type('application/json').send(answer);
    },
  );
}

/**
 * `POST /approvals/:token`: the signed one-time links of a waiting approval step, for emails
 * and chat messages. Outside /api/v1 (no token: the signature is the credential); the body, if
 * any, is ignored, whatever its type (a form button, a chat tool's JSON).
 */
export async function approvalLinkRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 64 * 1024 }, (_request, _body, done) => done(null, undefined));
  app.post(
    '/approvals/:token',
    {
      config: { plainJson: true },
      schema: {
        tags: ['Approvals'],
        security: [],
        summary: 'Decide a waiting approval step through its signed approve_url or reject_url (once; until its time-out)',
        params: TOKEN_PARAMS,
        // Outside /api/v1 the media types are declared here (openapi.ts declares those of /api/v1).
        response: {
          200: { description: DECISION_RESPONSE.description, content: { 'application/json': { schema: DECISION_RESPONSE } } },
          400: { ...LINK_ERROR, description: 'the request is malformed (its framing: a bad Content-Length, a broken chunk)' },
          404: LINK_ERROR,
          409: LINK_ERROR,
          410: LINK_ERROR,
          413: { ...LINK_ERROR, description: 'the request body is over 64 KB (a link ignores its body, but does not read a large one)' },
        },
      },
    },
    async (request: FastifyRequest<{ Params: { token: string } }>, reply) => {
      const answer = await ctx.approvals.decideByLink(request.params.token);
      return reply.type('application/json').send(answer);
    },
  );
}
