import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { SharedRateLimits } from '../api/plugins/shared-rate-limits.js';
import { MAX_BODY_BYTES } from '../steps/webhook/index.js';
import { deliverWebhook, type DeliveryContext } from './deliver-webhook.js';
import { StaleEndpointError } from './endpoint-checks.js';
import { sendWebhookNotFound } from './webhook-answers.js';
import type { ResolvedEndpoint, WebhookEndpoints } from './webhook-endpoints.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The answer carries no request id (the webhook 404, byte-identical for every caller). */
    omitRequestId?: boolean;
    webhookEndpoint?: ResolvedEndpoint;
  }
}

export interface WebhookRouteContext extends DeliveryContext {
  endpoints: WebhookEndpoints;
  /** Deliveries a minute per source address (SWITCHYARD_WEBHOOK_RATE_LIMIT); 0: no limit. */
  rateLimit: number;
  /** Where the counts live when several processes share the database; null: in this process. */
  sharedRateLimits?: SharedRateLimits | null;
}

/** How many times a delivery is decided when the endpoint keeps changing under it (see the handler). */
const MAX_DECISIONS = 3;

/** Whether an endpoint lets a delivery in: not unknown or inactive (404), not declared too large (413, before the body is read). */
function atDoor(endpoint: ResolvedEndpoint | null, request: FastifyRequest): 'in' | 'not_found' | 'too_large' {
  // Inactive and not capturing: nothing can happen here, whoever asks.
  if (!endpoint || (endpoint.snapshotId === null && !endpoint.capturing)) return 'not_found';
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > endpoint.maxBodyBytes) return 'too_large';
  return 'in';
}

/** Refuses at the door (sent, or thrown), or records the endpoint on the request and answers true. */
function letIn(endpoint: ResolvedEndpoint | null, request: FastifyRequest, reply: FastifyReply, door = atDoor(endpoint, request)): boolean {
  if (door === 'not_found') {
    sendWebhookNotFound(reply);
    return false;
  }
  if (door === 'too_large')
    throw new AppError('payload_too_large', `the body exceeds this webhook's limit of ${endpoint!.maxBodyBytes} bytes`);
  request.webhookEndpoint = endpoint!;
  request.workspaceId = endpoint!.workspaceId;
  return true;
}

/** Methods a sender may deliver with; the method reaches the workflow in the trigger payload. */
const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'] as const;

/**
 * `{base_url}/webhooks/:webhook_id`, one endpoint per webhook node. Order of checks, each before
 * the next is paid for: the per-address rate limit (429), the endpoint (404, the same bytes for
 * an unknown id and an inactive workflow), the declared size (413, before the body is read),
 * then, on the raw body, verification (401) and the rest (deliver-webhook.ts). The body is never
 * parsed by the framework: verification needs its exact bytes.
 */
export async function webhookRoutes(app: FastifyInstance, ctx: WebhookRouteContext): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => done(null, body));

  if (ctx.rateLimit > 0) {
    await app.register(rateLimit, {
      global: true,
      store: ctx.sharedRateLimits ? ctx.sharedRateLimits.storeFor('webhook') : undefined,
      max: ctx.rateLimit,
      timeWindow: 60_000,
      hook: 'onRequest',
      enableDraftSpec: true,
      // request.ip honours SWITCHYARD_TRUST_PROXY: X-Forwarded-For counts only from those proxies.
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

  app.route<{ Params: { webhook_id: string } }>({
    method: [...METHODS],
    url: '/:webhook_id',
    bodyLimit: MAX_BODY_BYTES,
    schema: { hide: true },
    onRequest: async (request, reply) => {
      const id = request.params.webhook_id;
      const served = await ctx.endpoints.find(id);
      const door = atDoor(served, request);
      // Refused on a fresh look only: what was served may not have heard the latest change yet (webhook-endpoints.ts).
      const admitted =
        door !== 'in' && ctx.endpoints.checked
          ? letIn(await ctx.endpoints.find(id, 'fresh'), request, reply)
          : letIn(served, request, reply, door);
      return admitted ? undefined : reply;
    },
    handler: async (request, reply) => {
      const id = request.params.webhook_id;
      let endpoint = request.webhookEndpoint!;
      for (let decision = 1; ; decision += 1) {
        const served = endpoint;
        const current = async () => {
          const changed = await ctx.endpoints.changed(id, served);
          if (changed) throw new StaleEndpointError(id, changed.now);
        };
        let stale: StaleEndpointError;
        try {
          return await deliverWebhook(ctx, request, reply, served, current);
        } catch (error) {
          if (!(error instanceof StaleEndpointError)) throw error;
          // Changed again between every fresh look and its commit: the sender retries.
          if (decision === MAX_DECISIONS)
            throw new AppError('service_unavailable', 'the webhook changed while this delivery was handled; retry', undefined, {
              headers: { 'retry-after': '1' },
            });
          stale = error;
        }
        // Decided again, from the door, on the endpoint as it is now: the fresh look's, or read
        // from the database when the commit found its rows changed.
        const fresh = stale.now !== undefined ? stale.now : await ctx.endpoints.find(id, 'database');
        if (!letIn(fresh, request, reply)) return reply;
        endpoint = fresh!;
      }
    },
  });
  // Any other path under /webhooks answers like an unknown id.
  app.setNotFoundHandler((_request, reply) => sendWebhookNotFound(reply));
}
