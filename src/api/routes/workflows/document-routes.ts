import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiContext } from '../../api-context.js';
import { ERROR_RESPONSE_SCHEMA, ID_PARAMS_SCHEMA } from '../../jsonapi/resource-schemas.js';
import { actorOf } from './workflow-routes.js';
import { CALLS_RESPONSE_SCHEMA, EXPORT_RESPONSE_SCHEMA, MAP_QUERY_SCHEMA, MAP_RESPONSE_SCHEMA } from './document-schemas.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
const errors = { 400: ERROR_RESPONSE_SCHEMA, 401: ERROR_RESPONSE_SCHEMA, 403: ERROR_RESPONSE_SCHEMA, 404: ERROR_RESPONSE_SCHEMA };
const tags = ['Workflows'];

/** Workflow documents and the call graph: plain-JSON read routes (docs/import.md, docs/calls.md). */
export async function workflowDocumentRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  // The map is sent as a string: for a large workspace it is half a megabyte, and JSON.stringify
  // of its plain arrays beats the schema serializer (the schema still documents the answer).
  app.get(
    '/workflows/map',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'The workspace map: systems of workflows connected through calls, in columns by call depth, and the standalone rest',
        querystring: MAP_QUERY_SCHEMA,
        response: { 200: MAP_RESPONSE_SCHEMA, ...errors },
      },
    },
    async (request, reply) =>
      reply
        .type('application/json')
        .send(JSON.stringify(await ctx.callGraph.map(actorOf(request), request.query as Record<string, unknown>))),
  );

  app.get(
    '/workflows/:id/export',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'The workflow as a portable service/v1 document (environment ids stripped)',
        params: ID_PARAMS_SCHEMA,
        response: { 200: EXPORT_RESPONSE_SCHEMA, ...errors },
      },
    },
    async (request: IdRequest, reply) =>
      reply.type('application/json').send(await ctx.exports.exportWorkflow(actorOf(request), request.params.id)),
  );

  app.get(
    '/workflows/:id/calls',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'The workflows this one calls and those calling it (live canvas and active snapshot)',
        params: ID_PARAMS_SCHEMA,
        response: { 200: CALLS_RESPONSE_SCHEMA, ...errors },
      },
    },
    async (request: IdRequest, reply) =>
      reply.type('application/json').send(await ctx.callGraph.calls(actorOf(request), request.params.id)),
  );
}
