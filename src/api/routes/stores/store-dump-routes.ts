import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { AppError } from '../../../errors/app-error.js';
import type { Clock } from '../../../lib/clock.js';
import {
  DUMP_CONTENT_TYPES,
  DUMP_FORMATS,
  DUMP_MEDIA_TYPES,
  type DumpFormat,
  dumpStream,
} from '../../../services/stores/dump/store-dump.js';
import { MAX_REPORTED } from '../../../services/stores/dump/restore-report.js';
import { restoreStore } from '../../../services/stores/dump/store-restore.js';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { selectedAttributes } from '../../jsonapi/fields.js';
import { sendResource } from '../../jsonapi/respond.js';
import { ERROR_RESPONSE_SCHEMA, ID_PARAMS_SCHEMA, singleDocumentSchema } from '../../jsonapi/resource-schemas.js';
import { toResourceObject } from '../../jsonapi/serialize.js';
import { JSONAPI_MEDIA_TYPE } from '../../plugins/error-document.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { storeResource } from './store-resource.js';
import { STORE_TAGS } from './store-routes.js';

const errors = {
  400: ERROR_RESPONSE_SCHEMA,
  401: ERROR_RESPONSE_SCHEMA,
  403: ERROR_RESPONSE_SCHEMA,
  404: ERROR_RESPONSE_SCHEMA,
  406: ERROR_RESPONSE_SCHEMA,
  409: ERROR_RESPONSE_SCHEMA,
  415: ERROR_RESPONSE_SCHEMA,
  422: ERROR_RESPONSE_SCHEMA,
};
const NDJSON = 'application/x-ndjson';
/** The longest store name (StoreService); a longer `name` parameter is 400. */
const MAX_NAME = 200;

const DUMP_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: {
      type: 'string',
      enum: [...DUMP_FORMATS],
      default: 'ndjson',
      description:
        'ndjson (default: lossless, restorable), csv (a column per declared top-level field plus key and updated_at) or json (one array)',
    },
  },
} as const;

const RESTORE_QUERY = {
  type: 'object',
  additionalProperties: false,
  required: ['slug'],
  properties: {
    slug: { type: 'string', description: "the new store's slug (409 when taken)" },
    name: { type: 'string', description: `the new store's name, 1 to ${MAX_NAME} characters; the dump header's name when absent` },
  },
} as const;

const failure = {
  type: 'object',
  properties: {
    line: { type: 'integer', description: 'the 1-based line of the body (the header is line 1)' },
    key: { type: ['string', 'null'] },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          pointer: { type: 'string', description: "JSON Pointer into the line's object ('' for the whole line)" },
          detail: { type: 'string' },
        },
      },
    },
  },
} as const;

const storeDocument = singleDocumentSchema(storeResource);
const RESTORE_RESPONSE = {
  ...storeDocument,
  description: `the new store, as GET /stores/:id answers it, with the restore report in meta (the first ${MAX_REPORTED} failures, all counted in rows_failed)`,
  properties: {
    ...storeDocument.properties,
    meta: {
      type: 'object',
      properties: {
        rows_imported: { type: 'integer', description: 'rows the new store holds' },
        rows_failed: { type: 'integer', description: 'lines not imported (all of them; failures lists the first 1,000)' },
        failures: { type: 'array', items: failure },
        duplicates: {
          type: 'array',
          description: 'keys on several valid lines (the first 1,000): the last of the lines won',
          items: { type: 'object', properties: { key: { type: 'string' }, lines: { type: 'array', items: { type: 'integer' } } } },
        },
      },
    },
  },
} as const;

/**
 * The media type a dump request answers, by its format: the Accept header must admit it. An
 * unknown format admits them all (and JSON:API), so its answer is the 400 that says so.
 */
function dumpMediaTypes(request: FastifyRequest): readonly string[] {
  const format = (request.query as { format?: unknown }).format ?? 'ndjson';
  return DUMP_FORMATS.includes(format as DumpFormat)
    ? [DUMP_MEDIA_TYPES[format as DumpFormat]]
    : [...Object.values(DUMP_MEDIA_TYPES), JSONAPI_MEDIA_TYPE];
}

/** `GET /stores/:id/dump` and `POST /stores/restore`: streamed, outside the JSON:API surface (docs/stores.md). */
export async function storeDumpRoutes(app: FastifyInstance, ctx: ApiContext & { clock: Clock }): Promise<void> {
  app.get(
    '/stores/:id/dump',
    {
      config: { produces: dumpMediaTypes },
      schema: {
        tags: STORE_TAGS,
        summary: 'Dump a store, streamed: ndjson (header line, then one row per line), csv or json',
        params: ID_PARAMS_SCHEMA,
        querystring: DUMP_QUERY,
        response: {
          200: {
            description: "the dump, streamed; the Accept header must admit the format's media type",
            content: {
              [NDJSON]: { schema: { type: 'string' } },
              'text/csv': { schema: { type: 'string' } },
              'application/json': { schema: { type: 'array' } },
            },
          },
          ...errors,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { id: string }; Querystring: { format?: DumpFormat } }>, reply: FastifyReply) => {
      const store = await ctx.stores.get(actorOf(request), request.params.id);
      const format = request.query.format ?? 'ndjson';
      reply.header('content-disposition', `attachment; filename="${store.slug}.${format}"`);
      return reply.type(DUMP_CONTENT_TYPES[format]).send(dumpStream(ctx.db, store, format));
    },
  );

  // The NDJSON body reaches the handler as the request stream itself: nothing buffers it (the
  // API's 1 MiB body limit applies to buffered bodies only), so a restore of any size holds one
  // batch of rows in memory.
  await app.register(async (scope) => {
    scope.addContentTypeParser(NDJSON, (_request, payload, done) => done(null, payload));
    scope.post(
      '/stores/restore',
      {
        // The body schema documents the NDJSON body in OpenAPI; the body is a stream, checked line
        // by line by the restore. Fastify stops validating at the first failing part (the body,
        // before the query), so the query is checked in the handler.
        attachValidation: true,
        schema: {
          tags: STORE_TAGS,
          summary: `Restore an NDJSON dump into a NEW store (build scope); answers the store and the report: each bad line (the first ${MAX_REPORTED}, all counted) and each duplicated key`,
          querystring: RESTORE_QUERY,
          body: {
            description: `${NDJSON}: the dump's header line, then one {key, row, created_at, updated_at} per line`,
            content: { [NDJSON]: { schema: { type: 'string' } } },
          },
          response: {
            201: RESTORE_RESPONSE,
            ...errors,
            408: { ...ERROR_RESPONSE_SCHEMA, description: 'the body stalled past the restore lease; the store is given up' },
          },
        },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
        const query = request.query as Record<string, unknown>;
        const unknown = Object.keys(query).find((name) => name !== 'slug' && name !== 'name');
        if (unknown !== undefined)
          throw new AppError('invalid_query_parameter', `unknown query parameter "${unknown}": a restore takes slug and name`, {
            parameter: unknown,
          });
        if (typeof query.slug !== 'string' || query.slug === '')
          throw new AppError('invalid_query_parameter', "slug is required: the new store's slug, ?slug=…", { parameter: 'slug' });
        const name = query.name;
        if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.trim().length > MAX_NAME)) {
          throw new AppError('invalid_query_parameter', `name must be 1 to ${MAX_NAME} characters`, { parameter: 'name' });
        }
        const type = String(request.headers['content-type'] ?? '')
          .split(';')[0]!
          .trim()
          .toLowerCase();
        if (type !== NDJSON)
          throw new AppError('unsupported_media_type', `a restore takes the NDJSON dump as ${NDJSON}`, { header: 'Content-Type' });
        const deps = { db: ctx.db, dialect: ctx.dialect, clock: ctx.clock, stores: ctx.stores };
        const { store, meta } = await restoreStore(
          deps,
          actorOf(request),
          { slug: query.slug, ...(name !== undefined ? { name: name.trim() } : {}) },
          request.body as Readable,
        );
        const self = apiUrl(ctx, `/stores/${store.id}`);
        reply.header('location', self);
        const resource = toResourceObject(
          storeResource,
          store as unknown as Record<string, unknown>,
          selectedAttributes(storeResource, new Map()),
          self,
        );
        return sendResource(reply.code(201), resource, undefined, { ...meta });
      },
    );
  });
}
