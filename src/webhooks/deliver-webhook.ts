import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { EngineBusyError, type Engine, type ExecutionObserver, type RunEnd, type StartRun } from '../engine/engine.js';
import { IDEMPOTENCY_WINDOW_MS } from '../engine/retention.js';
import { addMs, type Clock } from '../lib/clock.js';
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../steps/webhook/index.js';
import { findDelivery, insertDelivery, recordCapture } from '../store/webhook-repository.js';
import type { DeliveryOutcome } from './delivery-outcome.js';
import { describeShape } from './describe-shape.js';
import { checkEndpointUnchanged, StaleEndpointError } from './endpoint-checks.js';
import { buildTriggerPayload } from './trigger-payload.js';
import { credentialHeaders, verifyDelivery } from './verify-delivery.js';
import { letIn } from './webhook-door.js';
import type { ResolvedEndpoint, WebhookEndpoints } from './webhook-endpoints.js';

export interface DeliveryContext {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  endpoints: WebhookEndpoints;
}

/** Sender-chosen keys longer than this are refused rather than stored. */
const MAX_IDEMPOTENCY_KEY = 255;

/** How many times a delivery is decided when the endpoint keeps changing under it (see deliverWebhook). */
const MAX_DECISIONS = 3;

/**
 * The endpoint a decision was made on is no longer the database's: decide again. `now`: the
 * endpoint as a fresh look found it (null: gone); absent when the commit's check of its rows
 * failed, and it must be read.
 */
type Stale = { kind: 'stale'; now?: ResolvedEndpoint | null };

type Decision = DeliveryOutcome | Stale;

/**
 * One delivery to a webhook endpoint, after the door let it in on `endpoint`: verification on
 * the raw bytes (401, nothing else happens), then capture or the run, ended per the node's
 * response mode. Every ending, a refusal included, is the returned outcome; only the unexpected
 * (a database failure) throws.
 *
 * A decision stands only on the endpoint the database holds. Before anything but a run is
 * decided on it (a refusal, a capture) a fresh look makes sure it did not change; a run's commit
 * checks the endpoint's rows itself (`rowStamp`, endpoint-checks.ts). Either way, when it did
 * change nothing was written, and the delivery is decided again from the door on the endpoint as
 * it is now; when it changed under every one of MAX_DECISIONS decisions, the sender retries.
 */
export async function deliverWebhook(
  ctx: DeliveryContext,
  request: FastifyRequest,
  webhookId: string,
  endpoint: ResolvedEndpoint,
): Promise<DeliveryOutcome> {
  for (let decision = 1; ; decision += 1) {
    const decided = await decide(ctx, request, webhookId, endpoint);
    if (decided.kind !== 'stale') return decided;
    // Changed again between every fresh look and its commit.
    if (decision === MAX_DECISIONS) return { kind: 'changing' };
    // The fresh look's endpoint, or read from the database when the commit found its rows changed.
    const door = letIn(decided.now !== undefined ? decided.now : await ctx.endpoints.find(webhookId, 'database'), request);
    if (door.kind !== 'in') return door;
    endpoint = door.endpoint;
  }
}

/** One decision on `endpoint`, in the order each check is paid for. */
async function decide(ctx: DeliveryContext, request: FastifyRequest, webhookId: string, endpoint: ResolvedEndpoint): Promise<Decision> {
  const body = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
  const verified = verifyDelivery(endpoint.verification, request.raw.rawHeaders, body, ctx.clock.nowMs());
  if (!verified.ok) {
    const stale = await checkCurrent(ctx, webhookId, endpoint);
    if (!stale) request.log.info({ webhook_id: endpoint.id, reason: verified.reason }, 'webhook delivery not authenticated');
    return stale ?? { kind: 'unauthorized' };
  }
  if (body.length > endpoint.maxBodyBytes)
    return (await checkCurrent(ctx, webhookId, endpoint)) ?? { kind: 'too_large', limit: endpoint.maxBodyBytes };
  const built = buildTriggerPayload({
    method: request.method,
    headers: request.headers,
    removeHeaders: credentialHeaders(endpoint.verification),
    query: (request.query ?? {}) as Record<string, unknown>,
    body,
  });
  if (!built.ok) return (await checkCurrent(ctx, webhookId, endpoint)) ?? { kind: 'invalid_body', detail: built.detail };
  const payload = built.payload;

  if (endpoint.capturing) {
    const stale = await checkCurrent(ctx, webhookId, endpoint);
    if (stale) return stale;
    const captured = await recordCapture(ctx.db, endpoint.id, {
      payload: JSON.stringify(payload),
      shape: JSON.stringify(describeShape(payload)),
      at: ctx.clock.now(),
    });
    if (captured) return { kind: 'captured' };
  }
  if (endpoint.snapshotId === null) return (await checkCurrent(ctx, webhookId, endpoint)) ?? { kind: 'not_found' };
  return runNode(ctx, request, webhookId, endpoint, endpoint.snapshotId, payload);
}

/**
 * Null while `endpoint` is still the one the database holds (PostgreSQL: looked up fresh, its
 * rows the same versions; SQLite: always), else the endpoint as it is now, to decide again on.
 */
async function checkCurrent(ctx: DeliveryContext, webhookId: string, endpoint: ResolvedEndpoint): Promise<Stale | null> {
  const changed = await ctx.endpoints.changed(webhookId, endpoint);
  return changed && { kind: 'stale', now: changed.now };
}

/**
 * The run on the endpoint's webhook node, ended per its response mode. `immediate`: accepted
 * once the execution row is committed. With an `Idempotency-Key` (or GitHub's
 * `X-GitHub-Delivery`) seen in the last 24 hours, the first delivery's execution instead; the
 * key is committed with the execution, so of two racing deliveries one starts and the other
 * finds it. `respond_step` and `last_step`: waited for, at most the node's timeout.
 *
 * The only function here that uses the engine (planOf, run, EngineBusyError, unobserve), so a
 * change to the engine's API is met in one place.
 */
async function runNode(
  ctx: DeliveryContext,
  request: FastifyRequest,
  webhookId: string,
  endpoint: ResolvedEndpoint,
  snapshotId: string,
  payload: unknown,
): Promise<Decision> {
  const plan = await ctx.engine.planOf(snapshotId);
  const node = plan.nodes.get(endpoint.nodeId);
  // A webhook node added to the canvas after activation is not live until the next activation.
  if (!node || node.type !== 'webhook') return (await checkCurrent(ctx, webhookId, endpoint)) ?? { kind: 'not_found' };
  const mode = (node.config.response_mode as string | undefined) ?? 'immediate';
  const timeoutMs = typeof node.config.timeout_ms === 'number' ? node.config.timeout_ms : DEFAULT_WEBHOOK_TIMEOUT_MS;
  // Completed below (observer, alsoWrite) by assignment: a spread of it would be the slow form (see step-rows.ts).
  const start: StartRun = {
    workspaceId: endpoint.workspaceId,
    workflowId: endpoint.workflowId,
    snapshotId,
    userId: null,
    trigger: payload,
    firedRoots: [endpoint.nodeId],
  };
  const rowStamp = endpoint.rowStamp;
  if (rowStamp !== undefined) start.alsoWrite = (trx) => checkEndpointUnchanged(trx, endpoint.id, rowStamp);

  const key = mode === 'immediate' ? idempotencyKey(request) : null;
  if (key !== null && key.length > MAX_IDEMPOTENCY_KEY) return { kind: 'key_too_long', limit: MAX_IDEMPOTENCY_KEY };
  const keyed = key === null ? null : await withKey(ctx, endpoint, key, start);
  if (keyed?.earlier) return { kind: 'accepted', executionId: keyed.earlier };

  const waiter = mode === 'immediate' ? null : waitFor(mode === 'respond_step');
  if (waiter) start.observer = waiter.observer;
  let executionId: string;
  try {
    // A full engine holds the delivery back (admission control) for at most the node's timeout.
    executionId = (await ctx.engine.run(start, { admissionTimeoutMs: timeoutMs })).execution_id;
  } catch (error) {
    // Nothing was created; the sender retries.
    if (error instanceof EngineBusyError) return { kind: 'busy' };
    // The commit failed. With a key, a racing delivery's row for it may be why (or an endpoint
    // changed under both): when one committed, its execution is this delivery's answer too.
    const winner = keyed && (await findDelivery(ctx.db, endpoint.id, keyed.key, keyed.since));
    if (winner) return { kind: 'accepted', executionId: winner };
    if (error instanceof StaleEndpointError) return { kind: 'stale' };
    throw error;
  }
  if (!waiter) return { kind: 'accepted', executionId };

  const waited = await waiter.settle(timeoutMs);
  if (waited.type === 'timeout') {
    ctx.engine.unobserve(executionId);
    return { kind: 'timed_out', executionId, timeoutMs };
  }
  if (waited.type === 'responded') return { kind: 'responded', executionId, response: waited.response };
  const end = waited.end;
  if (end.status === 'completed') return { kind: 'completed', executionId, output: end.output };
  // The caller learns that the run failed, not how: the execution's error is for the workspace.
  return { kind: 'run_failed', executionId, status: end.status === 'cancelled' ? 'cancelled' : 'failed' };
}

/**
 * The execution an earlier delivery with this key started within the window, if any; else the
 * key is written in the commit that admits this delivery's execution (after the endpoint's
 * check), where a racing delivery's row with the same key fails it.
 */
async function withKey(
  ctx: DeliveryContext,
  endpoint: ResolvedEndpoint,
  key: string,
  start: StartRun,
): Promise<{ key: string; since: string; earlier?: string }> {
  const now = ctx.clock.now();
  const since = addMs(now, -IDEMPOTENCY_WINDOW_MS);
  const earlier = await findDelivery(ctx.db, endpoint.id, key, since);
  if (earlier) return { key, since, earlier };
  const check = start.alsoWrite;
  start.alsoWrite = async (trx, executionId) => {
    await check?.(trx, executionId);
    await insertDelivery(trx, { webhook_id: endpoint.id, idempotency_key: key, execution_id: executionId, created_at: now }, since);
  };
  return { key, since };
}

/** The sender's idempotency key, null when it sent none. */
function idempotencyKey(request: FastifyRequest): string | null {
  const raw = request.headers['idempotency-key'] ?? request.headers['x-github-delivery'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  return key === undefined || key === '' ? null : key;
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
