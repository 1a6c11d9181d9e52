import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { readResourceDocument } from '../../jsonapi/request-document.js';
import { parseFields, selectedAttributes } from '../../jsonapi/fields.js';
import { rejectInclude } from '../../jsonapi/include.js';
import { sendList, sendResource } from '../../jsonapi/respond.js';
import { toResourceObject } from '../../jsonapi/serialize.js';
import {
  ID_PARAMS_SCHEMA,
  LIST_QUERY_SCHEMA,
  listDocumentSchema,
  RESOURCE_ERRORS,
  SINGLE_QUERY_SCHEMA,
  singleDocumentSchema,
} from '../../jsonapi/resource-schemas.js';
import { ConnectionRepository, type ConnectionRow } from '../../../store/connection-repository.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { connectionResource } from './connection-resource.js';
import { CREATE_CONNECTION_BODY, UPDATE_CONNECTION_BODY } from './connection-body-schemas.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
const single = singleDocumentSchema(connectionResource);
const errors = RESOURCE_ERRORS;
const tags = ['Connections'];

export async function connectionRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const present = (request: FastifyRequest, row: ConnectionRow) => {
    const query = request.query as { fields?: unknown; include?: unknown };
    rejectInclude(query.include, connectionResource);
    const fields = parseFields(query.fields, [connectionResource]);
    return toResourceObject(
      connectionResource,
      row as unknown as Record<string, unknown>,
      selectedAttributes(connectionResource, fields),
      apiUrl(ctx, `/connections/${row.id}`),
    );
  };

  app.get(
    '/connections',
    {
      schema: {
        tags,
        summary: 'List model-provider connections, oldest first',
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(connectionResource), ...errors },
      },
    },
    async (request, reply) =>
      sendList(request, reply, ctx, {
        definition: connectionResource,
        base: new ConnectionRepository(ctx.db, request.auth.workspace.id).selectBase(),
        path: '/connections',
      }),
  );

  app.post(
    '/connections',
    {
      schema: {
        tags,
        summary: 'Create a connection (the API key is sealed and never shown again)',
        body: CREATE_CONNECTION_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 201: single, ...errors },
      },
    },
    async (request, reply) => {
      const row = await ctx.connections.create(actorOf(request), readResourceDocument(request.body, 'connection'));
      reply.header('location', apiUrl(ctx, `/connections/${row.id}`));
      return sendResource(reply.code(201), present(request, row));
    },
  );

  app.get(
    '/connections/:id',
    {
      schema: {
        tags,
        summary: 'Read a connection',
        params: ID_PARAMS_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) =>
      sendResource(reply, present(request, await ctx.connections.get(actorOf(request), request.params.id))),
  );

  app.patch(
    '/connections/:id',
    {
      schema: {
        tags,
        summary: 'Rename a connection, change its base URL, or replace (null: remove) its API key',
        params: ID_PARAMS_SCHEMA,
        body: UPDATE_CONNECTION_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const input = readResourceDocument(request.body, 'connection', { id: request.params.id });
      return sendResource(reply, present(request, await ctx.connections.update(actorOf(request), request.params.id, input)));
    },
  );

  app.delete(
    '/connections/:id',
    {
      schema: {
        tags,
        summary: 'Delete a connection (409 while a knowledge base or memory uses it)',
        params: ID_PARAMS_SCHEMA,
        response: { 204: { type: 'null', description: 'deleted' }, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      await ctx.connections.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
