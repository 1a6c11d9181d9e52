import { digestsEqual, parseSha256Hex } from './hex-digest.js';
import { singleHeader } from './raw-headers.js';
import { hmacSha256, isUsableSecret } from './verify-hmac.js';
import { rejected, VERIFIED, type VerifyResult } from './verification.js';

export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';

/**
 * Stripe's tolerance (its libraries' DEFAULT_TOLERANCE). Stripe's own verifier only refuses
 * stale timestamps; this one refuses timestamps this far in the future too, so a signature
 * leaked with a future `t` cannot be held back and replayed later.
 */
export const STRIPE_TOLERANCE_SECONDS = 300;

/** Unix seconds without leading zeros; 15 digits stays exact as a double. */
const UNIX_SECONDS = /^(?:0|[1-9][0-9]{0,14})$/;

export interface StripeSignature {
  /** `t` exactly as sent: it is part of the signed text. */
  timestamp: string;
  /** Every `v1` digest, in header order. */
  signatures: Buffer[];
}

export type ParsedStripeSignature = { ok: true; value: StripeSignature } | { ok: false; reason: string };

/**
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>…]` with other schemes (v0, …) ignored. Items are split
 * on "," and then on the first "="; no whitespace is allowed inside, as in Stripe's libraries.
 * Malformed: an item without `key=`, `t` missing or repeated or not digits, no `v1`, or a `v1`
 * that is not 64 hex digits.
 */
export function parseStripeSignature(value: string): ParsedStripeSignature {
  let timestamp: string | undefined;
  let timestamps = 0;
  const signatures: Buffer[] = [];
  for (const item of value.split(',')) {
    const equals = item.indexOf('=');
    if (equals <= 0) return { ok: false, reason: 'stripe-signature has an item that is not key=value' };
    const key = item.slice(0, equals);
    const itemValue = item.slice(equals + 1);
    if (key === 't') {
      timestamps += 1;
      timestamp = itemValue;
    } else if (key === 'v1') {
      const digest = parseSha256Hex(itemValue);
      if (!digest) return { ok: false, reason: 'stripe-signature has a v1 that is not 64 hex digits' };
      signatures.push(digest);
    }
  }
  if (timestamps !== 1 || timestamp === undefined)
    return { ok: false, reason: `stripe-signature must have exactly one t (has ${timestamps})` };
  if (!UNIX_SECONDS.test(timestamp)) return { ok: false, reason: 'stripe-signature t is not unix seconds' };
  if (signatures.length === 0) return { ok: false, reason: 'stripe-signature has no v1 signature' };
  return { ok: true, value: { timestamp, signatures } };
}

/**
 * Stripe: the signed text is `${t}.` followed by the raw body bytes. Any `v1` may match (during
 * a secret rotation Stripe sends one per secret). Every `v1` is compared, matched or not, so the
 * time taken does not say which one matched. The signature is checked before the time, so a
 * "timestamp" reason in the log means an authentic but stale (or clock-skewed) delivery.
 */
export function verifyStripe(secret: string, rawHeaders: readonly string[], body: Buffer, nowMs: number): VerifyResult {
  if (!isUsableSecret(secret)) return rejected('configured HMAC secret is empty');
  const header = singleHeader(rawHeaders, STRIPE_SIGNATURE_HEADER);
  if (!header.ok) return rejected(header.reason);
  const parsed = parseStripeSignature(header.value);
  if (!parsed.ok) return rejected(parsed.reason);
  const { timestamp, signatures } = parsed.value;
  const expected = hmacSha256(secret, `${timestamp}.`, body);
  let matched = false;
  for (const signature of signatures) {
    const equal = digestsEqual(expected, signature);
    matched = matched || equal;
  }
  if (!matched) return rejected('no v1 signature matches');
  const skewMs = Math.abs(nowMs - Number(timestamp) * 1000);
  // Written so that a NaN clock reading fails closed.
  if (!(skewMs <= STRIPE_TOLERANCE_SECONDS * 1000))
    return rejected(`timestamp ${timestamp} is more than ${STRIPE_TOLERANCE_SECONDS} s from now`);
  return VERIFIED;
}
