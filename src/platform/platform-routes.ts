import rateLimit from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import type { SharedRateLimits } from '../api/plugins/shared-rate-limits.js';
import type { AppProvider } from '../db/schema.js';
import { AppError } from '../errors/app-error.js';

/** One delivery to a platform endpoint as its handler gets it: the raw bytes, nothing parsed. */
export interface PlatformDelivery {
  body: Buffer;
  /** Node's raw header list (name, value, name, value…), for exact single-header checks. */
  rawHeaders: readonly string[];
  headers: Record<string, string | string[] | undefined>;
  /** The path and query as received (Twilio signs the public URL: SWITCHYARD_BASE_URL + this). */
  url: string;
  ip: string;
  log: FastifyBaseLogger;
}

/**
 * A provider's endpoint at `{base_url}/webhooks/inbound/<path>`. The handler must verify the
 * raw body before it parses anything or touches a workflow (answering 401 by throwing
 * `AppError('unauthorized', …)`), then route by account, start runs (platform-start.ts) and answer.
 */
export interface PlatformEndpoint {
  provider: AppProvider;
  /** Below /webhooks/inbound, e.g. `/slack`. */
  path: string;
  method?: 'POST' | 'GET';
  /** Largest accepted body; a larger declared or received one is 413 before anything else. */
  maxBodyBytes: number;
  /** The OpenAPI path item (the route declares no schemas: they would drive parsing and serialisation). */
  openapi: Record<string, unknown>;
  handle(delivery: PlatformDelivery, reply: FastifyReply): Promise<FastifyReply>;
}

export interface PlatformRouteContext {
  /** Deliveries a minute per source address (SWITCHYARD_WEBHOOK_RATE_LIMIT, as for webhooks); 0: no limit. */
  rateLimit: number;
  sharedRateLimits?: SharedRateLimits | null;
  endpoints: readonly PlatformEndpoint[];
}

/**
 * The platform endpoints, registered with the prefix `/webhooks/inbound`. Each check comes before
 * the next is paid for: the per-address rate limit (429, counted apart from the webhook
 * endpoints'), the declared size (413, before the body is read), the received size, then the
 * provider's handler on the raw bytes. The framework never parses a body here.
 */
export async function platformRoutes(app: FastifyInstance, ctx: PlatformRouteContext): Promise<void> {
  const largest = Math.max(1, ...ctx.endpoints.map((e) => e.maxBodyBytes));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: largest }, (_request, body, done) => done(null, body));

  if (ctx.rateLimit > 0) {
    await app.register(rateLimit, {
      global: true,
      store: ctx.sharedRateLimits ? ctx.sharedRateLimits.storeFor('platform') : undefined,
      max: ctx.rateLimit,
      timeWindow: 60_000,
      hook: 'onRequest',
      enableDraftSpec: true,
      keyGenerator: (request) => request.ip,
      errorResponseBuilder: (_request, context) =>
        new AppError(
          'rate_limited',
          `rate limit of ${context.max} deliveries per minute from this address exceeded; retry after ${Math.ceil(context.ttl / 1000)} s`,
          undefined,
          {
            headers: { 'retry-after': String(Math.ceil(context.ttl / 1000)) },
          },
        ),
    });
  }

  for (const endpoint of ctx.endpoints) {
    app.route({
      method: endpoint.method ?? 'POST',
      url: endpoint.path,
      bodyLimit: endpoint.maxBodyBytes,
      schema: { hide: true },
      onRequest: async (request) => {
        const declared = Number(request.headers['content-length']);
        if (Number.isFinite(declared) && declared > endpoint.maxBodyBytes)
          throw new AppError('payload_too_large', `the body exceeds the limit of ${endpoint.maxBodyBytes} bytes`);
      },
      handler: async (request, reply) => {
        const body = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
        if (body.length > endpoint.maxBodyBytes)
          throw new AppError('payload_too_large', `the body exceeds the limit of ${endpoint.maxBodyBytes} bytes`);
        return endpoint.handle(
          { body, rawHeaders: request.raw.rawHeaders, headers: request.headers, url: request.url, ip: request.ip, log: request.log },
          reply,
        );
      },
    });
  }
}

/** The endpoints' OpenAPI path items, keyed by their full path. */
export function platformOpenApiPaths(endpoints: readonly PlatformEndpoint[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints)
    paths[`/webhooks/inbound${endpoint.path}`] = { ...paths[`/webhooks/inbound${endpoint.path}`], ...endpoint.openapi };
  return paths;
}
