import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestsEqual, parseSha256Hex } from './hex-digest.js';

const digest = createHash('sha256').update('switchyard').digest();
const hex = digest.toString('hex');

describe('parseSha256Hex', () => {
  it('reads 64 hex digits in either case as the same 32 bytes', () => {
    expect(parseSha256Hex(hex)).toEqual(digest);
    expect(parseSha256Hex(hex.toUpperCase())).toEqual(digest);
  });

  // Buffer.from(x, 'hex') would read the first two of these as the digest itself.
  it.each([
    ['one extra digit (odd length)', `${hex}0`],
    ['trailing non-hex', `${hex}zz`],
    ['one digit short (odd length)', hex.slice(0, 63)],
    ['two digits short', hex.slice(0, 62)],
    ['a non-hex digit', `g${hex.slice(1)}`],
    ['inner whitespace', `${hex.slice(0, 32)} ${hex.slice(32, 63)}`],
    ['empty', ''],
    ['not a string', 42 as unknown as string],
  ])('refuses %s', (_name, value) => {
    expect(parseSha256Hex(value)).toBeNull();
  });
});

describe('digestsEqual', () => {
  it('is true for equal digests and false for one differing in the last byte', () => {
    const other = Buffer.from(digest);
    other[31] = other[31]! ^ 1;
    expect(digestsEqual(digest, Buffer.from(digest))).toBe(true);
    expect(digestsEqual(digest, other)).toBe(false);
  });

  it('is false, without throwing, when either side is not 32 bytes', () => {
    expect(digestsEqual(digest, digest.subarray(0, 31))).toBe(false);
    expect(digestsEqual(Buffer.alloc(0), Buffer.alloc(0))).toBe(false);
  });
});
