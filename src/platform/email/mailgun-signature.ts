import { createHmac } from 'node:crypto';
import { digestsEqual, parseSha256Hex } from '../../webhooks/hex-digest.js';

/** How far a delivery's timestamp may be from our clock, either way. */
export const MAILGUN_TOLERANCE_S = 300;

export type MailgunCheck = { ok: true } | { ok: false; reason: 'missing' | 'stale' | 'bad_signature' };

/**
 * Mailgun's signature: hex HMAC-SHA256, keyed with the account's webhook signing key, over the
 * `timestamp` followed by the `token`. The timestamp must be within 300 s of now in either
 * direction (a future one is as suspect as an old one); comparison is constant time.
 */
export function checkMailgunSignature(
  signingKey: string,
  fields: { timestamp?: string; token?: string; signature?: string },
  nowMs: number,
): MailgunCheck {
  const { timestamp, token, signature } = fields;
  if (!timestamp || !token || !signature || !/^\d{1,12}$/.test(timestamp) || token.length > 256) return { ok: false, reason: 'missing' };
  const expected = createHmac('sha256', signingKey)
    .update(timestamp + token, 'utf8')
    .digest();
  const presented = parseSha256Hex(signature);
  const matches = presented !== null && digestsEqual(expected, presented);
  if (!matches) return { ok: false, reason: 'bad_signature' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > MAILGUN_TOLERANCE_S) return { ok: false, reason: 'stale' };
  return { ok: true };
}
