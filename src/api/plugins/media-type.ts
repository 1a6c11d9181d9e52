import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import { JSONAPI_MEDIA_TYPE } from './error-document.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers plain JSON (action routes): `application/json` is an acceptable Accept. */
    plainJson?: boolean;
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
    const [range = '', ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) continue;
    if (range === '*/*' || range === 'application/*') return true;
    if (range === JSONAPI_MEDIA_TYPE && params.filter((p) => !p.startsWith('q=')).length === 0) return true;
    if (plainJson && range === 'application/json') return true;
  }
  return false;
}

/**
 * JSON:API media type handling for the API scope: bodies are parsed only when sent as
 * `application/vnd.api+json` (a `charset=utf-8` parameter is tolerated, others are 415);
 * an empty body is allowed for action routes; an Accept header without the type is 406.
 */
export function registerMediaType(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(JSONAPI_MEDIA_TYPE, { parseAs: 'string' }, (request: FastifyRequest, body: string | Buffer, done) => {
    const params = String(request.headers['content-type'] ?? '').split(';').slice(1).map((p) => p.trim().toLowerCase()).filter(Boolean);
    if (params.some((p) => p !== 'charset=utf-8')) {
      done(new AppError('unsupported_media_type', `${JSONAPI_MEDIA_TYPE} must be sent without media type parameters`, { header: 'Content-Type' }), undefined);
      return;
    }
    if (String(body).trim() === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, String(body), done);
  });

  // Callback style: no promise a request on the open path.
  app.addHook('onRequest', (request, _reply, done) => {
    if (acceptsJsonApi(request.headers.accept, request.routeOptions.config?.plainJson === true)) done();
    else done(new AppError('not_acceptable', `this route answers ${JSONAPI_MEDIA_TYPE}; send an Accept header that includes it (or */*)`, { header: 'Accept' }));
  });
}
