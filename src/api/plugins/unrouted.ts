import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import { answerConnect } from './client-errors.js';
import { sendError } from './error-document.js';
import { pathOf } from './framework-errors.js';

/**
 * The methods some route serves at this path, asked of the router itself (`findRoute` matches a
 * concrete path as a request would), so no list of routes is kept by hand. HEAD is there
 * wherever GET is (Fastify exposes it), and OPTIONS wherever anything is (answered below).
 */
export function allowedMethods(app: FastifyInstance, path: string): string[] {
  const allowed = app.supportedMethods.filter((method) => method !== 'OPTIONS' && app.findRoute({ method, url: path }) !== null);
  return allowed.length > 0 ? [...allowed, 'OPTIONS'] : [];
}

function isDecodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The not-found handler of everything outside the webhook endpoints (they have their own):
 * - a path some route serves, with another method: 405 `method_not_allowed` and `Allow`;
 * - OPTIONS on such a path: 204 with `Allow` (no CORS is offered, so no CORS headers);
 * - anything else: 404 `not_found`.
 * It runs before authentication, as routing does: the answer depends only on the method and
 * the path, which the public OpenAPI document shows anyway.
 */
export function answerUnrouted(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = pathOf(request.raw.url);
  // The router refuses such a path for every method that has routes (frameworkErrors answers);
  // a method with none lands here, and must not see it as served.
  if (!isDecodable(path))
    return sendError(request, reply, new AppError('bad_request', 'the path holds a percent-escape that is not valid UTF-8'));
  const allowed = allowedMethods(request.server, path);
  if (allowed.length === 0) return sendError(request, reply, new AppError('not_found', `no route ${request.method} ${path}`));
  reply.header('allow', allowed.join(', '));
  if (request.method === 'OPTIONS') return reply.code(204).send();
  return sendError(request, reply, new AppError('method_not_allowed', `this path answers ${allowed.join(', ')}, not ${request.method}`));
}

/**
 * Outside /api/v1 and /webhooks no route takes a body, so none is read there: an unknown route
 * or a method a path does not serve answers 404 or 405 whatever the body's type, size or syntax
 * (Node discards the unread body). The two scopes replace this parser with their own.
 */
export function registerUnrouted(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  app.setNotFoundHandler(answerUnrouted);
  // CONNECT never reaches the router: Node hands it to 'connect' listeners, or drops it.
  app.server.on('connect', answerConnect);
}
