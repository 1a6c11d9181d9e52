import { createHash } from 'node:crypto';
import { digestsEqual, parseSha256Hex } from './hex-digest.js';
import { singleHeader } from './raw-headers.js';
import { rejected, VERIFIED, type VerifyResult } from './verification.js';

export const BEARER_HEADER = 'authorization';

/** Scheme in any case, exactly one space, then a token without whitespace (RFC 6750 section 2.1). */
const BEARER = /^bearer ([^\s]+)$/i;

/**
 * `Authorization: Bearer <token>`, where SHA-256 of the token (its UTF-8 bytes, as `sha256Hex`
 * hashes it when the token is minted) equals tokenHash. Digests are compared as bytes in
 * constant time, so neither the token nor how much of its hash matched shows in the timing.
 */
export function verifyBearer(tokenHash: string, rawHeaders: readonly string[]): VerifyResult {
  const expected = parseSha256Hex(tokenHash);
  if (!expected) return rejected('configured bearer token hash is not a SHA-256 hex digest');
  const header = singleHeader(rawHeaders, BEARER_HEADER);
  if (!header.ok) return rejected(header.reason);
  const match = BEARER.exec(header.value);
  if (!match?.[1]) return rejected('authorization header is not "Bearer <token>"');
  const presented = createHash('sha256').update(match[1], 'utf8').digest();
  return digestsEqual(expected, presented) ? VERIFIED : rejected('bearer token does not match');
}
