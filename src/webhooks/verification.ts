/**
 * Terminology for inbound webhook verification:
 * - delivery: one HTTP request to a webhook URL, taken as its raw body bytes and raw headers.
 * - verification: how a webhook node requires a delivery to prove where it came from.
 * - credential header: a header carrying that proof (a bearer token or a signature). It must
 *   appear exactly once and is stripped before the headers reach the workflow.
 */

/** Signature layouts an `hmac` verification understands; the spec's values verbatim. */
export const HMAC_FORMATS = ['github', 'stripe', 'plain'] as const;
export type HmacFormat = (typeof HMAC_FORMATS)[number];

export type Verification =
  | { method: 'none' }
  /** tokenHash: lowercase hex SHA-256 of the bearer token (`sha256Hex` in src/lib/secrets.ts). */
  | { method: 'bearer'; tokenHash: string }
  /** header: the signature header's name; read by `plain` only (GitHub and Stripe fix theirs). */
  | { method: 'hmac'; format: HmacFormat; header?: string; secret: string };

/** reason is for server logs only, never sent to the caller. */
export type VerifyResult = { ok: true } | { ok: false; reason: string };

export const VERIFIED: VerifyResult = Object.freeze({ ok: true });

export function rejected(reason: string): VerifyResult {
  return { ok: false, reason };
}
