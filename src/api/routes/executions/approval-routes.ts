import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound } from '../../../errors/app-error.js';
import { ExecutionRepository } from '../../../store/execution-repository.js';
import type { ApiContext } from '../../api-context.js';
import { parseFields } from '../../jsonapi/fields.js';
import { defaultFields } from '../../jsonapi/resource-definition.js';
import { sendResource } from '../../jsonapi/respond.js';
import { readActionData } from '../../jsonapi/request-document.js';
import {
  actionBodySchema,
  ERROR_RESPONSE_SCHEMA,
  LIST_QUERY_SCHEMA,
  singleDocumentSchema,
  RESOURCE_ERRORS,
} from '../../jsonapi/resource-schemas.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { MAX_APPROVAL_COMMENT_LENGTH, readLinkBody } from '../../../services/executions/approval-service.js';
import { EXECUTION_STEP_RELATIONSHIPS, executionStepObject, executionStepResource } from './execution-step-resource.js';

/** What a link answers (plain JSON): the decision it recorded, nothing more. */
const LINK_RESPONSE = {
  description: 'plain JSON (application/json): the decision recorded; the execution resumes and the step leaves by approved or rejected',
  type: 'object',
  required: ['decision'],
  properties: { decision: { type: 'string', enum: ['approve', 'reject'] } },
  additionalProperties: false,
} as const;

/** A link's optional JSON body (application/json or application/vnd.api+json). */
const LINK_BODY = {
  description: 'a JSON object; any other value (or no body) gives no comment and no input',
  properties: {
    comment: { type: ['string', 'null'], maxLength: MAX_APPROVAL_COMMENT_LENGTH, description: 'a note kept with the decision' },
    input: { description: "any JSON value, passed on in the step's output" },
  },
} as const;

/** Only `fields[execution-step]`: the decision answers the step's record. */
const DECISION_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: { fields: LIST_QUERY_SCHEMA.properties.fields },
} as const;

/** Attributes the decision answers without `fields[execution-step]`: the default ones and `output`. */
const DECISION_ATTRIBUTES = [...defaultFields(executionStepResource), 'output'];

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
      schema: {
        tags: ['Executions'],
        summary: "Approve or reject a waiting approval step (the first decision wins; a later one is 409); answers the step's record",
        params: STEP_PARAMS,
        querystring: DECISION_QUERY,
        body: actionBodySchema(DECISION_MEMBERS, ['decision']),
        response: {
          200: singleDocumentSchema(executionStepResource, EXECUTION_STEP_RELATIONSHIPS),
          ...RESOURCE_ERRORS,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string; step_id: string }; Querystring: { fields?: unknown } }>, reply) => {
      const fields = parseFields(request.query.fields, [executionStepResource]);
      const data = readActionData(request.body);
      const actor = actorOf(request);
      const decided = await ctx.approvals.decide(actor, request.params.id, request.params.step_id, data);
      // Read after the decision's commit: the record as it now stands (still waiting until the run resumes it).
      const row = await new ExecutionRepository(ctx.db, actor.workspaceId)
        .selectSteps(decided.execution_id)
        .selectAll()
        .where('execution_steps.id', '=', decided.step_id)
        .executeTakeFirst();
      if (!row) throw notFound('step');
      const requested = fields.get(executionStepResource.type);
      const attributes = requested
        ? Object.keys(executionStepResource.attributes).filter((name) => requested.has(name))
        : DECISION_ATTRIBUTES;
      return sendResource(reply, executionStepObject(ctx, row as Record<string, unknown>, attributes));
    },
  );
}

/** The media types whose body a link reads as `{comment, input}`. */
const JSON_BODY = /^application\/(?:json|vnd\.api\+json)\s*(?:;|$)/i;

/**
 * `POST /approvals/:token`: the signed one-time links of a waiting approval step, for emails
 * and chat messages. Outside /api/v1 (no token: the signature is the credential). The body is
 * optional: a JSON one (`application/json` or `application/vnd.api+json`) may give
 * `{comment, input}`; an empty body, another type (a form button) or JSON that does not parse
 * gives neither.
 */
export async function approvalLinkRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 64 * 1024 }, (request, body, done) => {
    if (!JSON_BODY.test(request.headers['content-type'] ?? '') || body.length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(body.toString('utf8')) as unknown);
    } catch {
      done(null, undefined);
    }
  });
  app.post(
    '/approvals/:token',
    {
      config: { plainJson: true },
      schema: {
        tags: ['Approvals'],
        security: [],
        summary: 'Decide a waiting approval step through its signed approve_url or reject_url (once; until its time-out)',
        params: TOKEN_PARAMS,
        // Declared for the document only: the body is read by the parser above, and checked by readLinkBody.
        body: {
          description: 'optional: {comment, input} as JSON; any other body is ignored',
          content: { 'application/json': { schema: LINK_BODY }, 'application/vnd.api+json': { schema: LINK_BODY } },
        },
        // Outside /api/v1 the media types are declared here (openapi.ts declares those of /api/v1).
        response: {
          200: { description: LINK_RESPONSE.description, content: { 'application/json': { schema: LINK_RESPONSE } } },
          400: {
            ...LINK_ERROR,
            description:
              "the request is malformed (its framing: a bad Content-Length, a broken chunk), or its JSON body's comment is not a string of at most 10000 characters",
          },
          404: LINK_ERROR,
          409: LINK_ERROR,
          410: { ...LINK_ERROR, description: 'the link was used (the step is decided, by either link or the API) or has expired' },
          413: { ...LINK_ERROR, description: 'the request body is over 64 KB' },
          415: { ...LINK_ERROR, description: 'a Content-Type header that is present but empty (no body of an unnamed type is read)' },
        },
      },
    },
    async (request: FastifyRequest<{ Params: { token: string } }>, reply) => {
      const answer = await ctx.approvals.decideByLink(request.params.token, readLinkBody(request.body));
      return reply.type('application/json').send({ decision: answer.decision });
    },
  );
}
