/**
 * How a delivery to a webhook endpoint ended, as a value: the door (webhook-door.ts) and the
 * delivery (deliver-webhook.ts) decide, and the route answers each kind in one place
 * (webhook-routes.ts), so a refusal is never sent from deep inside the delivery.
 *
 * Terms: a refusal (`not_found` to `key_too_long`) starts nothing; `captured` stores the payload
 * as the webhook's sample and starts nothing; the rest carry the execution they started or found,
 * except `busy` (the engine had no room in time) and `changing` (the endpoint changed under every
 * decision), after which nothing was written and the sender retries.
 */
export type DeliveryOutcome =
  /** Unknown, inactive, or a node that is not (yet) a live webhook: the one 404 for all of them. */
  | { kind: 'not_found' }
  /** Declared (at the door) or found (on the body) larger than the endpoint's limit, in bytes. */
  | { kind: 'too_large'; limit: number }
  /** Verification failed; the reason is in the server log only. */
  | { kind: 'unauthorized' }
  | { kind: 'invalid_body'; detail: string }
  /** An Idempotency-Key (or X-GitHub-Delivery) longer than `limit` characters is refused rather than stored. */
  | { kind: 'key_too_long'; limit: number }
  | { kind: 'captured' }
  /** `immediate`: the execution is committed (or, with a key seen before, was). */
  | { kind: 'accepted'; executionId: string }
  /** `respond_step`: what the respond step answered; the run goes on. */
  | { kind: 'responded'; executionId: string; response: unknown }
  /** `last_step`: the run completed with this output. */
  | { kind: 'completed'; executionId: string; output: unknown }
  /** The run ended before it answered, without completing (any end but a cancellation counts as failed). */
  | { kind: 'run_failed'; executionId: string; status: 'failed' | 'cancelled' }
  /** No answer within the node's timeout; the run goes on. */
  | { kind: 'timed_out'; executionId: string; timeoutMs: number }
  | { kind: 'busy' }
  | { kind: 'changing' };

/** A delivery the door turns away, before its body is read. */
export type DoorRefusal = Extract<DeliveryOutcome, { kind: 'not_found' | 'too_large' }>;
