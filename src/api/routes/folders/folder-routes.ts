import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { readResourceDocument } from '../../jsonapi/request-document.js';
import { parseFields, selectedAttributes } from '../../jsonapi/fields.js';
import { parseInclude } from '../../jsonapi/include.js';
import { sendList, sendResource } from '../../jsonapi/respond.js';
import { toResourceObject, type ResourceObject } from '../../jsonapi/serialize.js';
import {
  ID_PARAMS_SCHEMA,
  LIST_QUERY_SCHEMA,
  listDocumentSchema,
  RESOURCE_ERRORS,
  SINGLE_QUERY_SCHEMA,
  singleDocumentSchema,
} from '../../jsonapi/resource-schemas.js';
import { FolderRepository, type FolderRow } from '../../../store/folder-repository.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { folderResource } from './folder-resource.js';
import { CREATE_FOLDER_BODY, RENAME_FOLDER_BODY, REORDER_FOLDER_BODY } from './folder-body-schemas.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
const RELATIONSHIPS = { parent: 'workflow-folder' };
const single = singleDocumentSchema(folderResource, RELATIONSHIPS, [{ definition: folderResource, relationships: RELATIONSHIPS }]);
const errors = RESOURCE_ERRORS;
const tags = ['Folders'];

export async function folderRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const toResource = (request: FastifyRequest, row: FolderRow): ResourceObject => {
    const fields = parseFields((request.query as { fields?: unknown }).fields, [folderResource]);
    return toResourceObject(
      folderResource,
      row as unknown as Record<string, unknown>,
      selectedAttributes(folderResource, fields),
      apiUrl(ctx, `/folders/${row.id}`),
      {
        parent: { data: row.parent_id ? { type: 'workflow-folder', id: row.parent_id } : null },
      },
    );
  };

  /** `include=parent` adds the parents of the primary folders to `included`, each once. */
  const included = async (request: FastifyRequest, rows: FolderRow[]): Promise<ResourceObject[] | undefined> => {
    const include = parseInclude((request.query as { include?: unknown }).include, folderResource, ['parent']);
    if (!include.includes('parent')) return undefined;
    const primary = new Set(rows.map((r) => r.id));
    const parentIds = [...new Set(rows.map((r) => r.parent_id).filter((id): id is string => id !== null && !primary.has(id)))];
    const parents = await new FolderRepository(ctx.db, request.auth.workspace.id).findMany(parentIds);
    return parents.map((p) => toResource(request, p));
  };

  const respondOne = async (request: FastifyRequest, reply: Parameters<typeof sendResource>[0], row: FolderRow) =>
    sendResource(reply, toResource(request, row), await included(request, [row]));

  app.get(
    '/folders',
    {
      schema: {
        tags,
        summary: 'List folders by position',
        querystring: LIST_QUERY_SCHEMA,
        response: {
          200: listDocumentSchema(folderResource, RELATIONSHIPS, [{ definition: folderResource, relationships: RELATIONSHIPS }]),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const repo = new FolderRepository(ctx.db, request.auth.workspace.id);
      return sendList(request, reply, ctx, {
        definition: folderResource,
        base: repo.selectBase(),
        path: '/folders',
        extraColumns: ['parent_id'],
        toResource: (row) => toResource(request, row as unknown as FolderRow),
        included: (rows) => included(request, rows as unknown as FolderRow[]),
      });
    },
  );

  app.post(
    '/folders',
    {
      schema: {
        tags,
        summary: 'Create a folder (optional parent: one level deep)',
        body: CREATE_FOLDER_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 201: single, ...errors },
      },
    },
    async (request, reply) => {
      const row = await ctx.folders.create(
        actorOf(request),
        readResourceDocument(request.body, 'workflow-folder', { relationships: RELATIONSHIPS }),
      );
      reply.header('location', apiUrl(ctx, `/folders/${row.id}`));
      return respondOne(request, reply.code(201), row);
    },
  );

  app.get(
    '/folders/:id',
    {
      schema: {
        tags,
        summary: 'Read a folder',
        params: ID_PARAMS_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => respondOne(request, reply, await ctx.folders.get(actorOf(request), request.params.id)),
  );

  app.patch(
    '/folders/:id',
    {
      schema: {
        tags,
        summary: 'Rename a folder',
        params: ID_PARAMS_SCHEMA,
        body: RENAME_FOLDER_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const input = readResourceDocument(request.body, 'workflow-folder', { id: request.params.id });
      return respondOne(request, reply, await ctx.folders.rename(actorOf(request), request.params.id, input));
    },
  );

  app.delete(
    '/folders/:id',
    {
      schema: {
        tags,
        summary: 'Delete a folder; its workflows and subfolders move to the root',
        params: ID_PARAMS_SCHEMA,
        response: { 204: { type: 'null', description: 'deleted' }, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      await ctx.folders.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.patch(
    '/folders/:id/reorder',
    {
      schema: {
        tags,
        summary: 'Order a folder among its siblings (before_id/after_id or position) or reparent it (parent_id)',
        params: ID_PARAMS_SCHEMA,
        body: REORDER_FOLDER_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const input = readResourceDocument(request.body, 'workflow-folder', { id: request.params.id, relationships: RELATIONSHIPS });
      return respondOne(request, reply, await ctx.folders.reorder(actorOf(request), request.params.id, input));
    },
  );
}
