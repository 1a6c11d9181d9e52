import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import type { SharedRateLimits } from './shared-rate-limits.js';

/**
 * Per-token limit on the API (SWITCHYARD_API_RATE_LIMIT requests a minute; 0 turns it off).
 * It runs after authentication, keyed by the token id, and before the body is parsed. The
 * standard `RateLimit-*` headers go on every answer and `Retry-After` on a 429.
 */
export async function registerApiRateLimit(app: FastifyInstance, perMinute: number, shared: SharedRateLimits | null = null): Promise<void> {
  if (perMinute === 0) return;
  await app.register(rateLimit, {
    global: true,
    // Counted in PostgreSQL when several processes may serve (shared-rate-limits.ts).
    store: shared ? shared.storeFor('api') : undefined,
    max: perMinute,
    timeWindow: 60_000,
    hook: 'preParsing',
    enableDraftSpec: true,
    keyGenerator: (request) => request.auth?.tokenId ?? request.ip,
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `rate limit of ${context.max} requests per minute for this token exceeded; retry after ${Math.ceil(context.ttl / 1000)} s`, undefined, {
        headers: { 'retry-after': String(Math.ceil(context.ttl / 1000)) },
      }),
  });
}
