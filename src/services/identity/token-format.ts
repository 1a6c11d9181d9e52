import { randomBase62, sha256Hex } from '../../lib/secrets.js';

/**
 * API tokens look like `sy_` + 40 base62 characters (~238 bits). The first 11 characters are the
 * prefix, stored in clear for look-up and display; the whole token is stored only as SHA-256,
 * which suffices for high-entropy secrets (no password stretching needed).
 */
export const TOKEN_PREFIX_LENGTH = 11;
const TOKEN_PATTERN = /^sy_[0-9A-Za-z]{40}$/;

export function mintTokenSecret(): { token: string; prefix: string; hash: string } {
  const token = `sy_${randomBase62(40)}`;
  return { token, prefix: token.slice(0, TOKEN_PREFIX_LENGTH), hash: sha256Hex(token) };
}

export function isTokenShaped(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}
