import { timingSafeEqual } from 'node:crypto';

/** SHA-256 digests are 32 bytes; every signature and token hash here is one. */
export const SHA256_BYTES = 32;

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

/**
 * The 32 bytes written as 64 hex digits (either case), or null. Validated first because
 * `Buffer.from(x, 'hex')` silently stops at the first bad digit and drops an odd last one. The
 * check looks only at what the caller sent, so its timing says nothing about the expected value.
 */
export function parseSha256Hex(hex: string): Buffer | null {
  return typeof hex === 'string' && SHA256_HEX.test(hex) ? Buffer.from(hex, 'hex') : null;
}

/** Constant-time equality of two SHA-256 digests; both must be 32 bytes (anything else is unequal). */
export function digestsEqual(expected: Buffer, presented: Buffer): boolean {
  if (expected.length !== SHA256_BYTES || presented.length !== SHA256_BYTES) return false;
  return timingSafeEqual(expected, presented);
}
