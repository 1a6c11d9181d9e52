import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../../errors/app-error.js';
import type { ApiContext } from '../../api-context.js';
import { parseFields, selectedAttributes } from '../../jsonapi/fields.js';
import { rejectInclude } from '../../jsonapi/include.js';
import { sendResource } from '../../jsonapi/respond.js';
import { listDocumentSchema, RESOURCE_ERRORS, SINGLE_QUERY_SCHEMA, singleDocumentSchema } from '../../jsonapi/resource-schemas.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { rowResource, rowUrl, sendRowFeed } from './store-feeds.js';
import { storeRowResource } from './store-resource.js';
import { STORE_TAGS } from './store-routes.js';
import { FEED_QUERY_SCHEMA, PUT_ROW_BODY, ROW_PARAMS, ROW_WRITE_RESPONSE, STORE_ID_PARAMS } from './store-schemas.js';

type RowRequest = FastifyRequest<{ Params: { store_id: string; key: string } }>;
type StoreRequest = FastifyRequest<{ Params: { store_id: string } }>;
const errors = RESOURCE_ERRORS;
const tags = STORE_TAGS;

/**
 * Store rows: `PUT/GET/DELETE /stores/:store_id/rows/:key` and the change feed
 * `GET /stores/:store_id/rows`. The router decodes the key (`a%2Fb` is `a/b`, `%25` is `%`);
 * a key that does not decode as UTF-8 is answered by plugins/router-errors.ts.
 */
export async function storeRowRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.get(
    '/stores/:store_id/rows',
    {
      schema: {
        tags,
        summary: 'The change feed: rows ascending by (updated_at, key); links.next is a durable cursor, always present',
        params: STORE_ID_PARAMS,
        querystring: FEED_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(storeRowResource), ...errors },
      },
    },
    async (request: StoreRequest, reply) =>
      sendRowFeed(request, reply, ctx, await ctx.stores.get(actorOf(request), request.params.store_id)),
  );

  app.put(
    '/stores/:store_id/rows/:key',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'Insert (201) or replace (200) one row; it must satisfy the store schema, and the row cap applies',
        params: ROW_PARAMS,
        body: PUT_ROW_BODY,
        response: { 200: ROW_WRITE_RESPONSE, 201: ROW_WRITE_RESPONSE, ...errors },
      },
    },
    async (request: RowRequest, reply) => {
      const { store_id: storeId, key } = request.params;
      const result = await ctx.storeRows.put(actorOf(request), storeId, key, request.body);
      if (result.created) reply.code(201).header('location', rowUrl(ctx, storeId, key));
      return reply.type('application/json').send({
        key: result.key,
        row: result.row,
        created_at: result.created_at,
        updated_at: result.updated_at,
        workflow_id: result.workflow_id,
        execution_id: result.execution_id,
        created: result.created,
      });
    },
  );

  app.get(
    '/stores/:store_id/rows/:key',
    {
      schema: {
        tags,
        summary: 'Read one row',
        params: ROW_PARAMS,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: singleDocumentSchema(storeRowResource), ...errors },
      },
    },
    async (request: RowRequest, reply) => {
      const query = request.query as { fields?: unknown; include?: unknown };
      rejectInclude(query.include, storeRowResource);
      const attributes = selectedAttributes(storeRowResource, parseFields(query.fields, [storeRowResource]));
      const row = await ctx.storeRows.get(actorOf(request), request.params.store_id, request.params.key);
      return sendResource(reply, rowResource(ctx, request.params.store_id, row, attributes));
    },
  );

  app.delete(
    '/stores/:store_id/rows/:key',
    {
      schema: {
        tags,
        summary: 'Delete one row (404 when the key is not in the store); the deletions feed records it',
        params: ROW_PARAMS,
        response: { 204: { type: 'null', description: 'deleted' }, ...errors },
      },
    },
    async (request: RowRequest, reply) => {
      await ctx.storeRows.remove(actorOf(request), request.params.store_id, request.params.key);
      return reply.code(204).send();
    },
  );

  // `PUT /stores/:id/rows/` (an empty key) reaches the list's path, as trailing slashes are ignored.
  for (const method of ['PUT', 'DELETE'] as const) {
    app.route({
      method,
      url: '/stores/:store_id/rows',
      schema: { hide: true },
      handler: async () => {
        throw new AppError('invalid_key', 'the key must not be empty: address a row as /stores/:store_id/rows/:key', { parameter: 'key' });
      },
    });
  }
}
