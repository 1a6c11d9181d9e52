import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import type { SharedRateLimits } from './shared-rate-limits.js';

const WINDOW_MS = 60_000;
/** Windows kept before the ended ones are swept early (besides once a window). */
const SWEEP_AT_SIZE = 10_000;

const limitExceeded = (perMinute: number, retryAfterS: number) =>
  new AppError(
    'rate_limited',
    `rate limit of ${perMinute} requests per minute for this token exceeded; retry after ${retryAfterS} s`,
    undefined,
    {
      headers: { 'retry-after': String(retryAfterS) },
    },
  );

/**
 * Per-token limit on the API (SWITCHYARD_API_RATE_LIMIT requests a minute; 0 turns it off).
 * It runs after authentication, keyed by the token id, and before the body is parsed. The
 * standard `RateLimit-*` headers (the IETF draft's `ratelimit-limit`, `-remaining`, `-reset`) go
 * on every answer and `Retry-After` on a 429.
 *
 * One process (SQLite): a fixed window per token in memory, checked by one hook. It replaced
 * @fastify/rate-limit's in-memory store, whose per-request work (its store's LRU and timers,
 * options merged per route, its hooks) was ~4 points of the 50% of bare Fastify that `GET /me`
 * must reach (bench/results/foundation.md: `/me` 47.6% with it, 51.4% with the limit off). The
 * windows are the plugin's: the first request of a key opens a minute, the count resets when it
 * ends. Several processes (PostgreSQL) keep the plugin over counters in the database
 * (shared-rate-limits.ts), where the round trip dwarfs the plugin's own cost.
 */
export async function registerApiRateLimit(app: FastifyInstance, perMinute: number, shared: SharedRateLimits | null = null): Promise<void> {
  if (perMinute === 0) return;
  if (!shared) {
    registerLocalRateLimit(app, perMinute);
    return;
  }
  await app.register(rateLimit, {
    global: true,
    store: shared.storeFor('api'),
    max: perMinute,
    timeWindow: WINDOW_MS,
    hook: 'preParsing',
    enableDraftSpec: true,
    keyGenerator: (request) => request.auth?.tokenId ?? request.ip,
    errorResponseBuilder: (_request, context) => limitExceeded(context.max, Math.ceil(context.ttl / 1000)),
  });
}

interface Window {
  count: number;
  endsAt: number;
}

function registerLocalRateLimit(app: FastifyInstance, perMinute: number): void {
  const windows = new Map<string, Window>();
  const limitText = String(perMinute);
  let sweepAt = 0;
  const sweep = (now: number) => {
    for (const [key, window] of windows) if (window.endsAt <= now) windows.delete(key);
    sweepAt = now + WINDOW_MS;
  };
  // Callback style: an async hook's promise is measurable on every answer (see app.ts).
  app.addHook('preParsing', (request, reply, payload, done) => {
    const now = Date.now();
    const key = request.auth?.tokenId ?? request.ip;
    let window = windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      if (now >= sweepAt || windows.size >= SWEEP_AT_SIZE) sweep(now);
      window = { count: 0, endsAt: now + WINDOW_MS };
      windows.set(key, window);
    }
    window.count += 1;
    const resetS = Math.ceil((window.endsAt - now) / 1000);
    reply.header('ratelimit-limit', limitText);
    reply.header('ratelimit-remaining', String(Math.max(0, perMinute - window.count)));
    reply.header('ratelimit-reset', String(resetS));
    if (window.count > perMinute) done(limitExceeded(perMinute, resetS));
    else done(null, payload);
  });
}
