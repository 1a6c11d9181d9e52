import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StoreRow } from '../../../store/store-repository.js';
import { StoreRepository } from '../../../store/store-repository.js';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { parseFields, selectedAttributes } from '../../jsonapi/fields.js';
import { rejectInclude } from '../../jsonapi/include.js';
import { readResourceDocument } from '../../jsonapi/request-document.js';
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
import { actorOf } from '../workflows/workflow-routes.js';
import { sendDeletionFeed } from './store-feeds.js';
import { CREATE_STORE_BODY, DELETIONS_QUERY_SCHEMA, DELETIONS_RESPONSE, UPDATE_STORE_BODY } from './store-schemas.js';
import { storeResource } from './store-resource.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
const single = singleDocumentSchema(storeResource);
const errors = RESOURCE_ERRORS;
export const STORE_TAGS = ['Stores'];
const tags = STORE_TAGS;

/** The store resource: `GET/POST /stores`, `GET/PATCH/DELETE /stores/:id`, and the deletions feed. */
export async function storeRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const present = (request: FastifyRequest, row: StoreRow) => {
    const query = request.query as { fields?: unknown; include?: unknown };
    rejectInclude(query.include, storeResource);
    const fields = parseFields(query.fields, [storeResource]);
    return toResourceObject(
      storeResource,
      row as unknown as Record<string, unknown>,
      selectedAttributes(storeResource, fields),
      apiUrl(ctx, `/stores/${row.id}`),
    );
  };

  app.get(
    '/stores',
    {
      schema: {
        tags,
        summary: "List the workspace's stores, oldest first",
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(storeResource), ...errors },
      },
    },
    async (request, reply) => {
      const repo = new StoreRepository(ctx.db, request.auth.workspace.id);
      return sendList(request, reply, ctx, { definition: storeResource, base: repo.selectBase(), path: '/stores' });
    },
  );

  app.post(
    '/stores',
    {
      schema: {
        tags,
        summary: 'Create a store (name; optional slug, description, schema, row_cap)',
        body: CREATE_STORE_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 201: single, ...errors },
      },
    },
    async (request, reply) => {
      const row = await ctx.stores.create(actorOf(request), readResourceDocument(request.body, 'store'));
      reply.header('location', apiUrl(ctx, `/stores/${row.id}`));
      return sendResource(reply.code(201), present(request, row));
    },
  );

  app.get(
    '/stores/:id',
    {
      schema: {
        tags,
        summary: 'Read a store: name, slug, schema, row count and cap',
        params: ID_PARAMS_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => sendResource(reply, present(request, await ctx.stores.get(actorOf(request), request.params.id))),
  );

  app.patch(
    '/stores/:id',
    {
      schema: {
        tags,
        summary: 'Change a store: name, slug, description, row_cap, or schema (accepted only when every row satisfies it)',
        params: ID_PARAMS_SCHEMA,
        body: UPDATE_STORE_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const input = readResourceDocument(request.body, 'store', { id: request.params.id });
      return sendResource(reply, present(request, await ctx.stores.update(actorOf(request), request.params.id, input)));
    },
  );

  app.delete(
    '/stores/:id',
    {
      schema: {
        tags,
        summary: 'Delete a store: gone at once; its rows are removed in the background',
        params: ID_PARAMS_SCHEMA,
        response: { 204: { type: 'null', description: 'deleted' }, ...errors },
      },
    },
    async (request: IdRequest, reply: FastifyReply) => {
      await ctx.stores.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/stores/:id/deletions',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'The deletions feed: tombstones of deleted keys, oldest first, with a cursor',
        params: ID_PARAMS_SCHEMA,
        querystring: DELETIONS_QUERY_SCHEMA,
        response: { 200: DELETIONS_RESPONSE, ...errors },
      },
    },
    async (request: IdRequest, reply) => sendDeletionFeed(request, reply, ctx, await ctx.stores.get(actorOf(request), request.params.id)),
  );
}
