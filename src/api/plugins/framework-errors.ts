import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import { sendError } from './error-document.js';
import { MAX_PARAM_LENGTH } from './http-limits.js';
import { rowKeyError } from './router-errors.js';

/** Paths answered by a scope of its own (by prefix), with its answer for a path it cannot route. */
export type OwnAnswers = Record<string, (reply: FastifyReply) => FastifyReply>;

/** The path of a raw request URL, without its query. */
export function pathOf(url: string | undefined): string {
  const path = url ?? '/';
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

/** The answer a scope of its own gives for paths under its prefix, if any. */
export function ownAnswerFor(ownAnswers: OwnAnswers, path: string): ((reply: FastifyReply) => FastifyReply) | undefined {
  for (const [prefix, answer] of Object.entries(ownAnswers)) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return answer;
  }
  return undefined;
}

/**
 * Fastify's `frameworkErrors`: the router refused the path before any route or hook ran (a
 * parameter over MAX_PARAM_LENGTH: 414; a percent-escape that is not UTF-8: 400). These replies
 * skip the app's hooks, so the request id header is set here. Paths of a scope with answers of
 * its own (the webhook endpoints: a malformed id answers exactly as an unknown one) get those.
 */
export function frameworkErrorHandler(ownAnswers: OwnAnswers) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const own = ownAnswerFor(ownAnswers, pathOf(request.raw.url));
    if (own) {
      own(reply);
      return;
    }
    reply.header('x-request-id', request.id);
    // A store row's key the router refused is answered as the key's error (400 `invalid_key`).
    const keyError = rowKeyError(error, request.url);
    if (keyError) {
      sendError(request, reply, keyError);
    } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      sendError(
        request,
        reply,
        new AppError('uri_too_long', `a segment of the path is too long for any route (at most ${MAX_PARAM_LENGTH} bytes as sent)`),
      );
    } else if (error.code === 'FST_ERR_BAD_URL') {
      sendError(request, reply, new AppError('bad_request', 'the path holds a percent-escape that is not valid UTF-8'));
    } else {
      sendError(request, reply, error);
    }
  };
}
