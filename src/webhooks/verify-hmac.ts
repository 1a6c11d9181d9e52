import { createHmac } from 'node:crypto';
import { digestsEqual, parseSha256Hex } from './hex-digest.js';
import { asciiLowercase, singleHeader } from './raw-headers.js';
import { rejected, VERIFIED, type VerifyResult } from './verification.js';

export const GITHUB_SIGNATURE_HEADER = 'x-hub-signature-256';
/** GitHub's legacy HMAC-SHA1 header, sent beside the SHA-256 one. Stripped, never checked. */
export const GITHUB_LEGACY_SIGNATURE_HEADER = 'x-hub-signature';

const GITHUB_PREFIX = 'sha256=';
const PLAIN_PREFIX = /^sha256=/i;

/** HMAC-SHA256 over the parts in order; strings are taken as UTF-8, buffers as their bytes. */
export function hmacSha256(secret: string, ...parts: Array<string | Buffer>): Buffer {
  const hmac = createHmac('sha256', secret);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the raw body. The prefix is
 * exact; the hex may be either case since the digests are compared as bytes.
 */
export function verifyGithub(secret: string, rawHeaders: readonly string[], body: Buffer): VerifyResult {
  if (!isUsableSecret(secret)) return rejected('configured HMAC secret is empty');
  const header = singleHeader(rawHeaders, GITHUB_SIGNATURE_HEADER);
  if (!header.ok) return rejected(header.reason);
  if (!header.value.startsWith(GITHUB_PREFIX)) return rejected(`${GITHUB_SIGNATURE_HEADER} does not start with "${GITHUB_PREFIX}"`);
  const presented = parseSha256Hex(header.value.slice(GITHUB_PREFIX.length));
  if (!presented) return rejected(`${GITHUB_SIGNATURE_HEADER} is not 64 hex digits after "${GITHUB_PREFIX}"`);
  return digestsEqual(hmacSha256(secret, body), presented) ? VERIFIED : rejected('signature does not match');
}

/**
 * Plain: the hex HMAC-SHA256 of the raw body (either case) in the configured header. A
 * `sha256=` prefix (any case) is accepted too, since many senders copy GitHub's layout; no
 * other prefix is.
 */
export function verifyPlain(secret: string, headerName: string | undefined, rawHeaders: readonly string[], body: Buffer): VerifyResult {
  if (!isUsableSecret(secret)) return rejected('configured HMAC secret is empty');
  if (!headerName) return rejected('plain HMAC verification has no header configured');
  const header = singleHeader(rawHeaders, headerName);
  if (!header.ok) return rejected(header.reason);
  const presented = parseSha256Hex(header.value.replace(PLAIN_PREFIX, ''));
  if (!presented) return rejected(`${asciiLowercase(headerName)} is not 64 hex digits (optionally after "sha256=")`);
  return digestsEqual(hmacSha256(secret, body), presented) ? VERIFIED : rejected('signature does not match');
}

/** An empty key would let anyone compute the signature; refuse it rather than accept everyone. */
export function isUsableSecret(secret: unknown): secret is string {
  return typeof secret === 'string' && secret.length > 0;
}
