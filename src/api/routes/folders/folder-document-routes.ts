import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { AppError } from '../../../errors/app-error.js';
import { sendResource } from '../../jsonapi/respond.js';
import { toResourceObject } from '../../jsonapi/serialize.js';
import { ERROR_RESPONSE_SCHEMA, ID_PARAMS_SCHEMA, singleDocumentSchema } from '../../jsonapi/resource-schemas.js';
import { isFolderImportBody } from '../../../services/folders/folder-documents.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { FOLDER_EXPORT_RESPONSE_SCHEMA } from '../workflows/document-schemas.js';
import { FOLDER_IMPORT_META_SCHEMA } from '../workflows/import-schemas.js';
import { folderResource } from './folder-resource.js';
import { IMPORT_FOLDER_BODY } from './folder-body-schemas.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
const errors = {
  400: ERROR_RESPONSE_SCHEMA,
  401: ERROR_RESPONSE_SCHEMA,
  403: ERROR_RESPONSE_SCHEMA,
  404: ERROR_RESPONSE_SCHEMA,
  422: ERROR_RESPONSE_SCHEMA,
};
const tags = ['Folders'];
const imported = singleDocumentSchema(folderResource, { parent: 'workflow-folder' });

/** Folder documents: export (plain JSON) and import (creates a folder tree and its workflows). */
export async function folderDocumentRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.get(
    '/folders/:id/export',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'The folder, its sub-folders and every workflow in them as a service-folder/v1 document',
        params: ID_PARAMS_SCHEMA,
        response: { 200: FOLDER_EXPORT_RESPONSE_SCHEMA, ...errors },
      },
    },
    async (request: IdRequest, reply) =>
      reply.type('application/json').send(await ctx.folderDocuments.exportFolder(actorOf(request), request.params.id)),
  );

  app.post(
    '/folders/import',
    {
      schema: {
        tags,
        summary:
          'Create a folder tree and its workflows from a service-folder/v1 document (or an n8n export:workflow list), calls among them rewired, in one transaction',
        description:
          "Answers the new folder; `meta.workflows` has each workflow's id and import report, `meta.folders` every folder created.",
        body: IMPORT_FOLDER_BODY,
        response: { 201: { ...imported, properties: { ...imported.properties, meta: FOLDER_IMPORT_META_SCHEMA } }, ...errors },
      },
    },
    async (request, reply) => {
      if (!isFolderImportBody(request.body))
        throw new AppError('invalid_document', 'the body must be {"data": {"document": …}}', { pointer: '/data' });
      const { folder, meta } = await ctx.folderDocuments.importFolder(actorOf(request), request.body.data);
      reply.header('location', apiUrl(ctx, `/folders/${folder.id}`));
      const resource = toResourceObject(
        folderResource,
        folder as unknown as Record<string, unknown>,
        ['name', 'parent_id', 'position', 'created_at', 'updated_at'],
        apiUrl(ctx, `/folders/${folder.id}`),
        {
          parent: { data: folder.parent_id ? { type: 'workflow-folder', id: folder.parent_id } : null },
        },
      );
      return sendResource(reply.code(201), resource, undefined, meta as unknown as Record<string, unknown>);
    },
  );
}
