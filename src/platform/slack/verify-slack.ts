import { digestsEqual, parseSha256Hex } from '../../webhooks/hex-digest.js';
import { singleHeader } from '../../webhooks/raw-headers.js';
import { hmacSha256, isUsableSecret } from '../../webhooks/verify-hmac.js';
import { rejected, VERIFIED, type VerifyResult } from '../../webhooks/verification.js';

export const SLACK_SIGNATURE_HEADER = 'x-slack-signature';
export const SLACK_TIMESTAMP_HEADER = 'x-slack-request-timestamp';
/** Slack's window: a request older (or newer) than 5 minutes is refused, so a captured one cannot be replayed later. */
export const SLACK_TOLERANCE_SECONDS = 300;

const VERSION_PREFIX = 'v0=';
const TIMESTAMP = /^\d{1,12}$/;

/**
 * Slack's request signing, v0: `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<ts>:<raw body>">`
 * keyed with the app's signing secret, `X-Slack-Request-Timestamp: <unix seconds>`. The
 * timestamp must lie within 300 s of now in BOTH directions (Slack's own libraries only refuse
 * old ones; a future one is as replayable), each header exactly once, compared in constant time.
 * Runs on the raw bytes before anything is parsed.
 */
export function verifySlack(signingSecret: string | undefined, rawHeaders: readonly string[], body: Buffer, nowMs: number): VerifyResult {
  if (!isUsableSecret(signingSecret)) return rejected('the Slack app has no signing secret (switchyard app set slack --signing-secret)');
  const timestamp = singleHeader(rawHeaders, SLACK_TIMESTAMP_HEADER);
  if (!timestamp.ok) return rejected(timestamp.reason);
  if (!TIMESTAMP.test(timestamp.value)) return rejected(`${SLACK_TIMESTAMP_HEADER} is not unix seconds`);
  const skew = Math.abs(Math.floor(nowMs / 1000) - Number(timestamp.value));
  if (skew > SLACK_TOLERANCE_SECONDS)
    return rejected(`${SLACK_TIMESTAMP_HEADER} is ${skew} s away from now (at most ${SLACK_TOLERANCE_SECONDS})`);
  const signature = singleHeader(rawHeaders, SLACK_SIGNATURE_HEADER);
  if (!signature.ok) return rejected(signature.reason);
  if (!signature.value.startsWith(VERSION_PREFIX)) return rejected(`${SLACK_SIGNATURE_HEADER} does not start with "${VERSION_PREFIX}"`);
  const presented = parseSha256Hex(signature.value.slice(VERSION_PREFIX.length));
  if (!presented) return rejected(`${SLACK_SIGNATURE_HEADER} is not 64 hex digits after "${VERSION_PREFIX}"`);
  const expected = hmacSha256(signingSecret, `v0:${timestamp.value}:`, body);
  return digestsEqual(expected, presented) ? VERIFIED : rejected('signature does not match');
}
