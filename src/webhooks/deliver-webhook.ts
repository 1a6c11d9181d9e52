import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { EngineBusyError, type Engine, type ExecutionObserver, type StartRun } from '../engine/engine.js';
import type { RunEnd } from '../engine/run/run-types.js';
import { AppError } from '../errors/app-error.js';
import { IDEMPOTENCY_WINDOW_MS } from '../engine/retention.js';
import { addMs, type Clock } from '../lib/clock.js';
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../steps/webhook/index.js';
import { findDelivery, insertDelivery, recordCapture } from '../store/webhook-repository.js';
import { describeShape } from './describe-shape.js';
import { checkEndpointUnchanged } from './endpoint-checks.js';
import { buildTriggerPayload } from './trigger-payload.js';
import { credentialHeaders, verifyDelivery } from './verify-delivery.js';
import { sendOutput, sendStepResponse, sendWebhookNotFound } from './webhook-answers.js';
import type { ResolvedEndpoint } from './webhook-endpoints.js';

export interface DeliveryContext {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
}

/** Sender-chosen keys longer than this are refused rather than stored. */
const MAX_IDEMPOTENCY_KEY = 255;

/**
 * One delivery to a webhook endpoint, after the endpoint was found and the size checked:
 * verification on the raw bytes (401, nothing else happens), then capture or the run, answered
 * per the node's response mode. Nothing here throws for a caller's mistake: every refusal is an
 * answer.
 *
 * `current` makes sure the endpoint is still the one the database holds (it throws
 * `StaleEndpointError` if not: the route decides again on a fresh one). It is asked before
 * anything but a run is decided on the endpoint (a refusal, a capture); a run's commit checks
 * the endpoint's rows itself (`rowStamp`, endpoint-checks.ts).
 */
export async function deliverWebhook(
  ctx: DeliveryContext,
  request: FastifyRequest,
  reply: FastifyReply,
  endpoint: ResolvedEndpoint,
  current: () => Promise<void> = async () => {},
): Promise<FastifyReply> {
  const body = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
  const verified = verifyDelivery(endpoint.verification, request.raw.rawHeaders, body, ctx.clock.nowMs());
  if (!verified.ok) {
    await current();
    request.log.info({ webhook_id: endpoint.id, reason: verified.reason }, 'webhook delivery not authenticated');
    throw new AppError('unauthorized', 'the delivery is not authenticated');
  }
  if (body.length > endpoint.maxBodyBytes) {
    await current();
    throw new AppError('payload_too_large', `the body exceeds this webhook's limit of ${endpoint.maxBodyBytes} bytes`);
  }
  const built = buildTriggerPayload({
    method: request.method,
    headers: request.headers,
    removeHeaders: credentialHeaders(endpoint.verification),
    query: (request.query ?? {}) as Record<string, unknown>,
    body,
  });
  if (!built.ok) {
    await current();
    throw new AppError('invalid_body', built.detail);
  }
  const payload = built.payload;

  if (endpoint.capturing) {
    await current();
    const now = ctx.clock.now();
    const captured = await recordCapture(ctx.db, endpoint.id, {
      payload: JSON.stringify(payload),
      shape: JSON.stringify(describeShape(payload)),
      at: now,
    });
    if (captured) return reply.code(202).type('application/json').send({ ok: true, captured: true });
  }
  if (endpoint.snapshotId === null) {
    await current();
    return sendWebhookNotFound(reply);
  }
  const plan = await ctx.engine.planOf(endpoint.snapshotId);
  const node = plan.nodes.get(endpoint.nodeId);
  // A webhook node added to the canvas after activation is not live until the next activation.
  if (!node || node.type !== 'webhook') {
    await current();
    return sendWebhookNotFound(reply);
  }
  const mode = (node.config.response_mode as string | undefined) ?? 'immediate';
  const timeoutMs = typeof node.config.timeout_ms === 'number' ? node.config.timeout_ms : DEFAULT_WEBHOOK_TIMEOUT_MS;
  // Completed below (observer, alsoWrite) by assignment: a spread of it would be the slow form (see step-rows.ts).
  const start: StartRun = {
    workspaceId: endpoint.workspaceId,
    workflowId: endpoint.workflowId,
    snapshotId: endpoint.snapshotId,
    userId: null,
    trigger: payload,
    firedRoots: [endpoint.nodeId],
  };
  const rowStamp = endpoint.rowStamp;
  if (rowStamp !== undefined) start.alsoWrite = (trx) => checkEndpointUnchanged(trx, endpoint.id, rowStamp);

  // A full engine holds the delivery back (admission control) for at most the node's timeout.
  const admission = timeoutMs;
  if (mode === 'immediate') return runImmediate(ctx, request, reply, endpoint, start, admission);

  const waiter = waitFor(mode === 'respond_step');
  start.observer = waiter.observer;
  const started = await admit(ctx.engine.run(start, admission));
  reply.header('x-execution-id', started.execution_id);
  const outcome = await waiter.settle(timeoutMs);
  if (outcome.type === 'timeout') {
    ctx.engine.unobserve(started.execution_id);
    throw new AppError(
      'webhook_timeout',
      `the workflow did not answer within ${timeoutMs} ms; execution ${started.execution_id} goes on running`,
    );
  }
  if (outcome.type === 'responded') return sendStepResponse(reply, outcome.response);
  const end = outcome.end;
  if (end.status === 'completed') return sendOutput(reply, end.output);
  // The caller learns that the run failed, not how: the execution's error is for the workspace.
  throw new AppError(
    'webhook_run_failed',
    `the workflow run ${end.status === 'cancelled' ? 'was cancelled' : 'failed'} before it answered (execution ${started.execution_id})`,
  );
}

/**
 * `immediate`: 202 once the execution row is committed. With an `Idempotency-Key` (or GitHub's
 * `X-GitHub-Delivery`) seen in the last 24 hours, the first delivery's answer instead; the key
 * is committed with the execution, so of two racing deliveries one starts and the other finds it.
 */
async function runImmediate(
  ctx: DeliveryContext,
  request: FastifyRequest,
  reply: FastifyReply,
  endpoint: ResolvedEndpoint,
  start: StartRun,
  admission: number,
): Promise<FastifyReply> {
  const key = idempotencyKey(request);
  const accepted = (executionId: string) =>
    reply.code(202).header('x-execution-id', executionId).type('application/json').send({ ok: true, execution_id: executionId });
  if (key === null) return accepted((await admit(ctx.engine.run(start, admission))).execution_id);

  const now = ctx.clock.now();
  const since = addMs(now, -IDEMPOTENCY_WINDOW_MS);
  const earlier = await findDelivery(ctx.db, endpoint.id, key, since);
  if (earlier) return accepted(earlier);
  try {
    const check = start.alsoWrite;
    start.alsoWrite = async (trx, executionId) => {
      await check?.(trx, executionId);
      await insertDelivery(trx, { webhook_id: endpoint.id, idempotency_key: key, execution_id: executionId, created_at: now }, since);
    };
    const started = await admit(ctx.engine.run(start, admission));
    return accepted(started.execution_id);
  } catch (error) {
    if (error instanceof AppError) throw error;
    const winner = await findDelivery(ctx.db, endpoint.id, key, since);
    if (winner) return accepted(winner);
    throw error;
  }
}

/** The engine's answer, or 503 with Retry-After when it had no room in time (nothing was created). */
async function admit<T>(started: Promise<T>): Promise<T> {
  try {
    return await started;
  } catch (error) {
    if (error instanceof EngineBusyError)
      throw new AppError('service_unavailable', 'the workflow engine is at capacity; retry later', undefined, {
        headers: { 'retry-after': '1' },
      });
    throw error;
  }
}

function idempotencyKey(request: FastifyRequest): string | null {
  const raw = request.headers['idempotency-key'] ?? request.headers['x-github-delivery'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || key === '') return null;
  if (key.length > MAX_IDEMPOTENCY_KEY)
    throw new AppError('bad_request', `an idempotency key is at most ${MAX_IDEMPOTENCY_KEY} characters`, { header: 'Idempotency-Key' });
  return key;
}

type Waited = { type: 'responded'; response: unknown } | { type: 'ended'; end: RunEnd } | { type: 'timeout' };

/** Resolves with the first of: the respond step's answer (when wanted), the run's end, the timeout. */
function waitFor(wantsResponse: boolean): { observer: ExecutionObserver; settle: (timeoutMs: number) => Promise<Waited> } {
  let resolve!: (value: Waited) => void;
  const settled = new Promise<Waited>((r) => (resolve = r));
  const observer: ExecutionObserver = { ended: (end) => resolve({ type: 'ended', end }) };
  if (wantsResponse) observer.responded = (response: unknown) => resolve({ type: 'responded', response });
  return {
    observer,
    settle: async (timeoutMs) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<Waited>((r) => (timer = setTimeout(() => r({ type: 'timeout' }), timeoutMs)));
      try {
        return await Promise.race([settled, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
