import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import { findUnstorableInJson } from '../../lib/storable-text.js';
import { JSONAPI_MEDIA_TYPE } from './error-document.js';
import { findTooDeep } from '../../lib/json-depth.js';
import { MAX_BODY_DEPTH, tooDeepError } from './json-depth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers plain JSON (action routes): `application/json` is an acceptable Accept. */
    plainJson?: boolean;
    /**
     * The body is kept only as JSON text (a run's input, as a webhook payload is): NUL and
     * unpaired surrogates are stored escaped there, so the parser lets them through.
     */
    jsonTextBody?: boolean;
    /**
     * The media types (without parameters) of the route's success answer when it is not a JSON
     * document (the store dump streams NDJSON, CSV or JSON): the Accept header must admit one of
     * them instead of JSON:API. A function when they depend on the request (the dump's
     * `format`). Error answers stay JSON:API documents whatever the Accept.
     */
    produces?: readonly string[] | ((request: FastifyRequest) => readonly string[]);
  }
}

/**
 * Accepts a media range list unless it excludes the JSON:API type. Per JSON:API 1.0, a
 * `application/vnd.api+json` range with parameters does not count as accepting it.
 */
export function acceptsJsonApi(accept: string | undefined, plainJson: boolean): boolean {
  // The common answers first, without splitting (this runs before every API request).
  if (!accept || accept === '*/*' || accept === JSONAPI_MEDIA_TYPE) return true;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part
      .trim()
      .toLowerCase()
      .split(';')
      .map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) continue;
    if (range === '*/*' || range === 'application/*') return true;
    if (range === JSONAPI_MEDIA_TYPE && params.filter((p) => !p.startsWith('q=')).length === 0) return true;
    if (plainJson && range === 'application/json') return true;
  }
  return false;
}

/**
 * Whether an Accept header admits one of `types`: for each type the most specific range that
 * matches it decides (the type itself, then `text/*` for a `text/…` type, then the any-type
 * range), and a zero quality refuses it (RFC 9110, 12.5.1). Parameters other than `q` are ignored.
 */
export function acceptsOneOf(accept: string | undefined, types: readonly string[]): boolean {
  if (!accept) return true;
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part
      .trim()
      .toLowerCase()
      .split(';')
      .map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    return { range, refused: q !== undefined && Number(q.slice(2)) === 0 };
  });
  return types.some((type) => {
    let best: { specificity: number; refused: boolean } | null = null;
    for (const { range, refused } of ranges) {
      const specificity = range === type ? 3 : range === `${type.split('/')[0]}/*` ? 2 : range === '*/*' ? 1 : 0;
      if (specificity > 0 && (best === null || specificity > best.specificity)) best = { specificity, refused };
    }
    return best !== null && !best.refused;
  });
}

/** The media types a route answers beside JSON:API errors, or null for a JSON:API route. */
function producedTypes(request: FastifyRequest): readonly string[] | null {
  const produces = request.routeOptions.config?.produces;
  if (produces === undefined) return null;
  return typeof produces === 'function' ? produces(request) : produces;
}

/**
 * JSON:API media type handling for the API scope: bodies are parsed only when sent as
 * `application/vnd.api+json` (a `charset=utf-8` parameter is tolerated, others are 415), and
 * refused when nested deeper than MAX_BODY_DEPTH (400 `json_too_deep`, with a pointer);
 * an empty body is allowed for action routes; an Accept header without the type is 406, or, on
 * a route that declares the media types it produces, an Accept header admitting none of them.
 */
export function registerMediaType(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(JSONAPI_MEDIA_TYPE, { parseAs: 'string' }, (request: FastifyRequest, body: string | Buffer, done) => {
    const params = String(request.headers['content-type'] ?? '')
      .split(';')
      .slice(1)
      .map((p) => p.trim().toLowerCase())
      .filter(Boolean);
    if (params.some((p) => p !== 'charset=utf-8')) {
      done(
        new AppError('unsupported_media_type', `${JSONAPI_MEDIA_TYPE} must be sent without media type parameters`, {
          header: 'Content-Type',
        }),
        undefined,
      );
      return;
    }
    if (String(body).trim() === '') {
      done(null, undefined);
      return;
    }
    const text = String(body);
    parseJson(request, text, (error, value) => {
      if (error) return done(error, undefined);
      // Before anything walks or stores the value: past the limit, recursion (JSON.stringify
      // first) would overflow the stack and answer 500 (json-depth.ts).
      const tooDeep = findTooDeep(text, MAX_BODY_DEPTH);
      if (tooDeep !== null) return done(tooDeepError(tooDeep), undefined);
      // Strings PostgreSQL cannot store (NUL, unpaired surrogates) are refused on both dialects
      // here, once, with a pointer, instead of failing the statement that would write them.
      const unstorable = request.routeOptions.config?.jsonTextBody ? null : findUnstorableInJson(text, value);
      if (unstorable) return done(new AppError('validation_failed', unstorable.detail, { pointer: unstorable.pointer }), undefined);
      done(null, value);
    });
  });

  // Callback style: no promise a request on the open path.
  app.addHook('onRequest', (request, _reply, done) => {
    const produced = producedTypes(request);
    if (produced === null) {
      if (acceptsJsonApi(request.headers.accept, request.routeOptions.config?.plainJson === true)) done();
      else
        done(
          new AppError('not_acceptable', `this route answers ${JSONAPI_MEDIA_TYPE}; send an Accept header that includes it (or */*)`, {
            header: 'Accept',
          }),
        );
    } else if (acceptsOneOf(request.headers.accept, produced)) done();
    else
      done(
        new AppError('not_acceptable', `this request answers ${produced.join(' or ')}; send an Accept header that includes it (or */*)`, {
          header: 'Accept',
        }),
      );
  });
}
