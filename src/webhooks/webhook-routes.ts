import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { SharedRateLimits } from '../api/plugins/shared-rate-limits.js';
import { MAX_BODY_BYTES } from '../steps/webhook/index.js';
import type { DeliveryOutcome } from './delivery-outcome.js';
import { deliverWebhook, type DeliveryContext } from './deliver-webhook.js';
import { sendOutput, sendStepResponse, sendWebhookNotFound } from './webhook-answers.js';
import { letIn } from './webhook-door.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The answer carries no request id (the webhook 404, byte-identical for every caller). */
    omitRequestId?: boolean;
  }
}

export interface WebhookRouteContext extends DeliveryContext {
  /** Deliveries a minute per source address (SWITCHYARD_WEBHOOK_RATE_LIMIT); 0: no limit. */
  rateLimit: number;
  /** Where the counts live when several processes share the database; null: in this process. */
  sharedRateLimits?: SharedRateLimits | null;
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
      let door = letIn(await ctx.endpoints.find(id), request);
      // Refused on a fresh look only: what was served may not have heard the latest change yet (webhook-endpoints.ts).
      if (door.kind !== 'in' && ctx.endpoints.checked) door = letIn(await ctx.endpoints.find(id, 'fresh'), request);
      return door.kind === 'in' ? undefined : answer(reply, door);
    },
    handler: async (request, reply) =>
      answer(reply, await deliverWebhook(ctx, request, request.params.webhook_id, request.webhookEndpoint!)),
  });
  // Any other path under /webhooks answers like an unknown id.
  app.setNotFoundHandler((_request, reply) => sendWebhookNotFound(reply));
}

/**
 * The answer to every outcome of a delivery, the door's refusals included: the one place a
 * delivery becomes HTTP. Refusals are thrown as AppErrors for the error handler to write (after
 * the execution's id, when there is one, was set as a header). An outcome not listed here fails
 * closed: a 500, never an answer that could pass for success.
 */
function answer(reply: FastifyReply, outcome: DeliveryOutcome): FastifyReply {
  switch (outcome.kind) {
    case 'not_found':
      return sendWebhookNotFound(reply);
    case 'too_large':
      throw new AppError('payload_too_large', `the body exceeds this webhook's limit of ${outcome.limit} bytes`);
    case 'unauthorized':
      throw new AppError('unauthorized', 'the delivery is not authenticated');
    case 'invalid_body':
      throw new AppError('invalid_body', outcome.detail);
    case 'key_too_long':
      throw new AppError('bad_request', `an idempotency key is at most ${outcome.limit} characters`, { header: 'Idempotency-Key' });
    case 'captured':
      return reply.code(202).type('application/json').send({ ok: true, captured: true });
    case 'accepted':
      return reply
        .code(202)
        .header('x-execution-id', outcome.executionId)
        .type('application/json')
        .send({ ok: true, execution_id: outcome.executionId });
    case 'responded':
      return sendStepResponse(reply.header('x-execution-id', outcome.executionId), outcome.response);
    case 'completed':
      return sendOutput(reply.header('x-execution-id', outcome.executionId), outcome.output);
    case 'run_failed':
      reply.header('x-execution-id', outcome.executionId);
      throw new AppError(
        'webhook_run_failed',
        `the workflow run ${outcome.status === 'cancelled' ? 'was cancelled' : 'failed'} before it answered (execution ${outcome.executionId})`,
      );
    case 'timed_out':
      reply.header('x-execution-id', outcome.executionId);
      throw new AppError(
        'webhook_timeout',
        `the workflow did not answer within ${outcome.timeoutMs} ms; execution ${outcome.executionId} goes on running`,
      );
    case 'busy':
      throw retryLater('the workflow engine is at capacity; retry later');
    case 'changing':
      throw retryLater('the webhook changed while this delivery was handled; retry');
    default:
      return unknownOutcome(outcome);
  }
}

/** 503: nothing was written, and the sender may try again in a second. */
function retryLater(detail: string): AppError {
  return new AppError('service_unavailable', detail, undefined, { headers: { 'retry-after': '1' } });
}

/** Every kind is answered above; a kind added without its answer fails the type check here, and at run time is a 500. */
function unknownOutcome(outcome: never): never {
  throw new Error(`webhook delivery ended in an outcome with no answer: ${JSON.stringify(outcome)}`);
}
