import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { AppError } from '../../../errors/app-error.js';
import type { Clock } from '../../../lib/clock.js';
import { DUMP_CONTENT_TYPES, DUMP_FORMATS, type DumpFormat, dumpStream } from '../../../services/stores/store-dump.js';
import { MAX_REPORTED, restoreStore } from '../../../services/stores/store-restore.js';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { ERROR_RESPONSE_SCHEMA, ID_PARAMS_SCHEMA } from '../../jsonapi/resource-schemas.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { STORE_TAGS } from './store-routes.js';

const errors = { 400: ERROR_RESPONSE_SCHEMA, 401: ERROR_RESPONSE_SCHEMA, 403: ERROR_RESPONSE_SCHEMA, 404: ERROR_RESPONSE_SCHEMA, 409: ERROR_RESPONSE_SCHEMA, 415: ERROR_RESPONSE_SCHEMA, 422: ERROR_RESPONSE_SCHEMA };
const NDJSON = 'application/x-ndjson';

const DUMP_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: { format: { type: 'string', enum: [...DUMP_FORMATS], default: 'ndjson', description: 'ndjson (default: lossless, restorable), csv (a column per declared top-level field plus key and updated_at) or json (one array)' } },
} as const;

const RESTORE_QUERY = {
  type: 'object',
  additionalProperties: false,
  required: ['slug'],
  properties: { slug: { type: 'string', description: "the new store's slug (409 when taken)" } },
} as const;

const problem = {
  type: 'object',
  properties: { line: { type: 'integer' }, key: { type: ['string', 'null'] }, code: { type: 'string' }, message: { type: 'string' }, pointers: { type: 'array', items: { type: 'string' } } },
} as const;

const RESTORE_RESPONSE = {
  type: 'object',
  description: 'The restore report: the new store, rows imported, and each failed line (the first 1,000; `failed` counts them all)',
  properties: {
    store: { type: 'object', properties: { id: { type: 'string' }, slug: { type: 'string' }, name: { type: 'string' }, row_count: { type: 'integer' } } },
    lines: { type: 'integer' },
    imported: { type: 'integer' },
    failed: { type: 'integer' },
    errors: { type: 'array', items: problem },
    duplicates: { type: 'object', properties: { count: { type: 'integer' }, lines: { type: 'array', items: { type: 'object', properties: { line: { type: 'integer' }, key: { type: 'string' } } } } } },
  },
} as const;

/** `GET /stores/:id/dump` and `POST /stores/restore`: streamed, outside the JSON:API surface (docs/stores.md). */
export async function storeDumpRoutes(app: FastifyInstance, ctx: ApiContext & { clock: Clock }): Promise<void> {
  app.get('/stores/:id/dump', {
    config: { plainJson: true },
    schema: {
      tags: STORE_TAGS,
      summary: 'Dump a store, streamed: ndjson (header line, then one row per line), csv or json',
      params: ID_PARAMS_SCHEMA,
      querystring: DUMP_QUERY,
      response: { 200: { description: 'the dump, streamed', content: { [NDJSON]: { schema: { type: 'string' } }, 'text/csv': { schema: { type: 'string' } }, 'application/json': { schema: { type: 'array' } } } }, ...errors },
    },
  }, async (request: FastifyRequest<{ Params: { id: string }; Querystring: { format?: DumpFormat } }>, reply: FastifyReply) => {
    const store = await ctx.stores.get(actorOf(request), request.params.id);
    const format = request.query.format ?? 'ndjson';
    const extension = format === 'ndjson' ? 'ndjson' : format;
    reply.header('content-disposition', `attachment; filename="${store.slug}.${extension}"`);
    return reply.type(DUMP_CONTENT_TYPES[format]).send(dumpStream(ctx.db, store, format));
  });

  // The NDJSON body reaches the handler as the request stream itself: nothing buffers it, so a
  // restore of any size holds one batch of rows in memory.
  await app.register(async (scope) => {
    scope.addContentTypeParser(NDJSON, (_request, payload, done) => done(null, payload));
    scope.post('/stores/restore', {
      config: { plainJson: true },
      // The body schema documents the NDJSON body in OpenAPI; the body is a stream, checked line
      // by line by the restore. Fastify stops validating at the first failing part (the body,
      // before the query), so the query is checked in the handler.
      attachValidation: true,
      schema: {
        tags: STORE_TAGS,
        summary: `Restore an NDJSON dump into a NEW store (build scope); each bad line is reported (the first ${MAX_REPORTED}, plus a count)`,
        querystring: RESTORE_QUERY,
        body: { description: `${NDJSON}: the dump's header line, then one {key, row, created_at, updated_at} per line`, content: { [NDJSON]: { schema: { type: 'string' } } } },
        response: { 201: RESTORE_RESPONSE, ...errors },
      },
    }, async (request: FastifyRequest<{ Querystring: { slug: string } }>, reply: FastifyReply) => {
      if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
      const query = request.query as Record<string, unknown>;
      const unknown = Object.keys(query).find((name) => name !== 'slug');
      if (unknown !== undefined) throw new AppError('invalid_query_parameter', `unknown query parameter "${unknown}": a restore takes slug`, { parameter: unknown });
      if (typeof query.slug !== 'string' || query.slug === '') throw new AppError('invalid_query_parameter', "slug is required: the new store's slug, ?slug=…", { parameter: 'slug' });
      const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== NDJSON) throw new AppError('unsupported_media_type', `a restore takes the NDJSON dump as ${NDJSON}`, { header: 'Content-Type' });
      const report = await restoreStore({ db: ctx.db, clock: ctx.clock, stores: ctx.stores }, actorOf(request), request.query.slug, request.body as Readable);
      const { store } = report;
      reply.header('location', apiUrl(ctx, `/stores/${store.id}`));
      return reply.code(201).type('application/json').send({
        store: { id: store.id, slug: store.slug, name: store.name, row_count: store.row_count },
        lines: report.lines,
        imported: report.imported,
        failed: report.failed,
        errors: report.errors,
        duplicates: report.duplicates,
      });
    });
  });
}
