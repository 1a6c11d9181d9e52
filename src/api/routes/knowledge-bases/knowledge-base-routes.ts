import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../errors/app-error.js';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { readActionData, readResourceDocument } from '../../jsonapi/request-document.js';
import { parseFields, selectedAttributes } from '../../jsonapi/fields.js';
import { rejectInclude } from '../../jsonapi/include.js';
import { sendList, sendResource } from '../../jsonapi/respond.js';
import { toResourceObject } from '../../jsonapi/serialize.js';
import {
  ERROR_RESPONSE_SCHEMA,
  ID_PARAMS_SCHEMA,
  LIST_QUERY_SCHEMA,
  listDocumentSchema,
  RESOURCE_ERRORS,
  SINGLE_QUERY_SCHEMA,
  singleDocumentSchema,
} from '../../jsonapi/resource-schemas.js';
import { JSONAPI_MEDIA_TYPE } from '../../plugins/error-document.js';
import { KnowledgeBaseRepository, type KnowledgeBaseRow } from '../../../store/knowledge-base-repository.js';
import { KnowledgeDocumentRepository, type KnowledgeDocumentRow } from '../../../store/knowledge-document-repository.js';
import { MAX_DOCUMENT_BYTES } from '../../../services/knowledge/knowledge-document-service.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { knowledgeBaseResource, knowledgeDocumentResource } from './knowledge-base-resource.js';
import { CREATE_BASE_BODY, INGEST_BODY, SEARCH_BODY, UPDATE_BASE_BODY } from './knowledge-base-body-schemas.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
type DocumentRequest = FastifyRequest<{ Params: { id: string; document_id: string } }>;
const single = singleDocumentSchema(knowledgeBaseResource);
const singleDocument = singleDocumentSchema(knowledgeDocumentResource);
const errors = RESOURCE_ERRORS;
const searchErrors = { ...errors, 502: ERROR_RESPONSE_SCHEMA, 503: ERROR_RESPONSE_SCHEMA };
const tags = ['Knowledge bases'];
const DOCUMENT_PARAMS = {
  type: 'object',
  required: ['id', 'document_id'],
  properties: { id: { type: 'string' }, document_id: { type: 'string' } },
} as const;
const RAW_TYPES = ['text/markdown', 'text/plain'];

const INGEST_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    title: { type: 'string', description: 'raw bodies: the title (required)' },
    external_key: { type: 'string', description: 'raw bodies: the key a re-send matches' },
    ...SINGLE_QUERY_SCHEMA.properties,
  },
} as const;

const SEARCH_RESPONSE = {
  type: 'object',
  properties: {
    results: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          chunk_id: { type: 'string', format: 'uuid' },
          document_id: { type: 'string', format: 'uuid' },
          title: { type: 'string' },
          heading_path: { type: 'array', items: { type: 'string' } },
          text: { type: 'string' },
          score: { type: 'number' },
        },
      },
    },
  },
} as const;

export async function knowledgeBaseRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const present = (request: FastifyRequest, row: KnowledgeBaseRow) => {
    const query = request.query as { fields?: unknown; include?: unknown };
    rejectInclude(query.include, knowledgeBaseResource);
    const fields = parseFields(query.fields, [knowledgeBaseResource]);
    return toResourceObject(
      knowledgeBaseResource,
      row as unknown as Record<string, unknown>,
      selectedAttributes(knowledgeBaseResource, fields),
      apiUrl(ctx, `/knowledge-bases/${row.id}`),
    );
  };
  const documentUrl = (row: Pick<KnowledgeDocumentRow, 'id' | 'knowledge_base_id'>) =>
    apiUrl(ctx, `/knowledge-bases/${row.knowledge_base_id}/documents/${row.id}`);
  const presentDocument = (request: FastifyRequest, row: KnowledgeDocumentRow) => {
    const query = request.query as { fields?: unknown; include?: unknown };
    rejectInclude(query.include, knowledgeDocumentResource);
    const fields = parseFields(query.fields, [knowledgeDocumentResource]);
    return toResourceObject(
      knowledgeDocumentResource,
      row as unknown as Record<string, unknown>,
      selectedAttributes(knowledgeDocumentResource, fields),
      documentUrl(row),
    );
  };

  app.get(
    '/knowledge-bases',
    {
      schema: {
        tags,
        summary: 'List knowledge bases, oldest first',
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(knowledgeBaseResource), ...errors },
      },
    },
    async (request, reply) =>
      sendList(request, reply, ctx, {
        definition: knowledgeBaseResource,
        base: new KnowledgeBaseRepository(ctx.db, request.auth.workspace.id).selectBase(),
        path: '/knowledge-bases',
      }),
  );

  app.post(
    '/knowledge-bases',
    {
      schema: {
        tags,
        summary: 'Create a knowledge base (built-in embedder by default)',
        body: CREATE_BASE_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 201: single, ...errors },
      },
    },
    async (request, reply) => {
      const row = await ctx.knowledgeBases.create(actorOf(request), readResourceDocument(request.body, 'knowledge-base'));
      reply.header('location', apiUrl(ctx, `/knowledge-bases/${row.id}`));
      return sendResource(reply.code(201), present(request, row));
    },
  );

  app.get(
    '/knowledge-bases/:id',
    {
      schema: {
        tags,
        summary: 'Read a knowledge base',
        params: ID_PARAMS_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) =>
      sendResource(reply, present(request, await ctx.knowledgeBases.get(actorOf(request), request.params.id))),
  );

  app.patch(
    '/knowledge-bases/:id',
    {
      schema: {
        tags,
        summary: 'Change a knowledge base (a new embedder re-embeds every chunk in the background)',
        params: ID_PARAMS_SCHEMA,
        body: UPDATE_BASE_BODY,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: single, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const input = readResourceDocument(request.body, 'knowledge-base', { id: request.params.id });
      return sendResource(reply, present(request, await ctx.knowledgeBases.update(actorOf(request), request.params.id, input)));
    },
  );

  app.delete(
    '/knowledge-bases/:id',
    {
      schema: {
        tags,
        summary: 'Delete a knowledge base with its documents',
        params: ID_PARAMS_SCHEMA,
        response: { 204: { type: 'null', description: 'deleted' }, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      await ctx.knowledgeBases.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/knowledge-bases/:id/documents',
    {
      schema: {
        tags,
        summary: "List a knowledge base's documents with their ingest status, oldest first",
        params: ID_PARAMS_SCHEMA,
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(knowledgeDocumentResource), ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      const base = await ctx.knowledgeBases.get(actorOf(request), request.params.id);
      return sendList(request, reply, ctx, {
        definition: knowledgeDocumentResource,
        base: new KnowledgeDocumentRepository(ctx.db, request.auth.workspace.id).selectBase(base.id),
        path: `/knowledge-bases/${base.id}/documents`,
        extraColumns: ['knowledge_base_id'],
        toResource: (row) => presentDocument(request, row as unknown as KnowledgeDocumentRow),
      });
    },
  );

  // Raw text bodies are accepted on this route only, so every other route keeps answering 415 to them.
  await app.register(async (scope) => {
    scope.addContentTypeParser(RAW_TYPES, { parseAs: 'string', bodyLimit: MAX_DOCUMENT_BYTES }, (_request, body, done) => done(null, body));
    scope.post(
      '/knowledge-bases/:id/documents',
      {
        bodyLimit: MAX_DOCUMENT_BYTES + 64 * 1024,
        schema: {
          tags,
          summary:
            'Ingest a text or markdown document: chunked now, embedded in the background (201 new, 200 re-sent: unchanged or replaced)',
          params: ID_PARAMS_SCHEMA,
          querystring: INGEST_QUERY,
          body: INGEST_BODY,
          response: { 200: singleDocument, 201: singleDocument, ...errors, 413: ERROR_RESPONSE_SCHEMA, 415: ERROR_RESPONSE_SCHEMA },
        },
      },
      async (request: IdRequest, reply: FastifyReply) => {
        const query = request.query as { title?: string; external_key?: string };
        const type = String(request.headers['content-type'] ?? '')
          .split(';')[0]!
          .trim()
          .toLowerCase();
        let input;
        if (RAW_TYPES.includes(type)) {
          if (query.title === undefined)
            throw new AppError('validation_failed', 'a raw document needs its title in the query: ?title=…', { parameter: 'title' });
          const values: Record<string, unknown> = { title: query.title, content: request.body ?? '', content_type: type };
          if (query.external_key !== undefined) values.external_key = query.external_key;
          input = { values, pointer: (name: string) => (name === 'content' ? '' : `/${name}`) };
        } else {
          for (const parameter of ['title', 'external_key'] as const) {
            if (query[parameter] !== undefined)
              throw new AppError(
                'invalid_query_parameter',
                `${parameter} goes in the body's attributes; the query form is for raw text/markdown and text/plain bodies`,
                { parameter },
              );
          }
          input = readResourceDocument(request.body, 'knowledge-document');
        }
        const { document, outcome } = await ctx.knowledgeDocuments.ingest(actorOf(request), request.params.id, input);
        reply.header('location', documentUrl(document));
        const data = presentDocument(request, document);
        return reply
          .code(outcome === 'created' ? 201 : 200)
          .type(JSONAPI_MEDIA_TYPE)
          .send({ data, links: { self: data.links.self }, meta: { outcome }, jsonapi: { version: '1.0' } });
      },
    );
  });

  app.get(
    '/knowledge-bases/:id/documents/:document_id',
    {
      schema: {
        tags,
        summary: 'Read a document and its ingest status',
        params: DOCUMENT_PARAMS,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: singleDocument, ...errors },
      },
    },
    async (request: DocumentRequest, reply) =>
      sendResource(
        reply,
        presentDocument(request, await ctx.knowledgeDocuments.get(actorOf(request), request.params.id, request.params.document_id)),
      ),
  );

  app.delete(
    '/knowledge-bases/:id/documents/:document_id',
    {
      schema: {
        tags,
        summary: 'Delete a document; its chunks leave the search at once',
        params: DOCUMENT_PARAMS,
        response: { 204: { type: 'null', description: 'deleted' }, ...errors },
      },
    },
    async (request: DocumentRequest, reply) => {
      await ctx.knowledgeDocuments.remove(actorOf(request), request.params.id, request.params.document_id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/knowledge-bases/:id/search',
    {
      config: { plainJson: true },
      schema: {
        tags,
        summary: 'Search a knowledge base: hybrid (default), vector or keyword, with a metadata filter',
        params: ID_PARAMS_SCHEMA,
        body: SEARCH_BODY,
        response: { 200: SEARCH_RESPONSE, ...searchErrors },
      },
    },
    async (request: IdRequest, reply) => {
      const results = await ctx.knowledgeBases.searchBase(actorOf(request), request.params.id, readActionData(request.body));
      return reply.type('application/json').send({ results });
    },
  );
}
