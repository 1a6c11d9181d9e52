import { describe, expect, it } from 'vitest';
import { asciiLowercase, singleHeader } from './raw-headers.js';

describe('singleHeader', () => {
  it('finds a header whatever the case of its name or of the name asked for', () => {
    const raw = ['Host', 'example.test', 'X-Signature', 'abc'];
    expect(singleHeader(raw, 'x-signature')).toEqual({ ok: true, value: 'abc' });
    expect(singleHeader(raw, 'X-SIGNATURE')).toEqual({ ok: true, value: 'abc' });
  });

  it('trims surrounding spaces and tabs but keeps inner whitespace', () => {
    expect(singleHeader(['x-signature', ' \t a b \t'], 'x-signature')).toEqual({ ok: true, value: 'a b' });
  });

  it('keeps an empty value (the verifier decides it is malformed)', () => {
    expect(singleHeader(['x-signature', ''], 'x-signature')).toEqual({ ok: true, value: '' });
  });

  it('fails when the header is absent', () => {
    expect(singleHeader(['Host', 'example.test'], 'X-Signature')).toEqual({ ok: false, reason: 'missing header x-signature' });
    expect(singleHeader([], 'x-signature')).toEqual({ ok: false, reason: 'missing header x-signature' });
  });

  it('fails when the header appears twice, in any case, even with equal values', () => {
    expect(singleHeader(['X-Signature', 'a', 'Host', 'h', 'x-signature', 'a'], 'x-signature')).toEqual({
      ok: false,
      reason: 'header x-signature appears 2 times',
    });
    expect(singleHeader(['x-signature', 'a', 'X-SIGNATURE', 'b', 'x-Signature', 'c'], 'x-signature')).toEqual({
      ok: false,
      reason: 'header x-signature appears 3 times',
    });
  });

  it('ignores repeats of other headers', () => {
    expect(singleHeader(['Accept', 'a', 'accept', 'b', 'x-signature', 's'], 'x-signature')).toEqual({ ok: true, value: 's' });
  });

  it('fails on a list that is not name/value string pairs', () => {
    const reason = 'raw headers are not name/value pairs';
    expect(singleHeader(['x-signature', 'a', 'dangling'], 'x-signature')).toEqual({ ok: false, reason });
    expect(singleHeader(['x-signature', 42 as unknown as string], 'x-signature')).toEqual({ ok: false, reason });
    expect(singleHeader(null as unknown as string[], 'x-signature')).toEqual({ ok: false, reason });
  });

  it('does not treat a non-ASCII look-alike name as the header', () => {
    // U+212A KELVIN SIGN lowercases to "k" under String#toLowerCase.
    expect(singleHeader(['X-\u212Aey', 'forged', 'x-key', 'real'], 'x-key')).toEqual({ ok: true, value: 'real' });
  });
});

describe('asciiLowercase', () => {
  it('lowercases ASCII letters only', () => {
    expect(asciiLowercase('X-Hub-Signature-256')).toBe('x-hub-signature-256');
    expect(asciiLowercase('\u212A\u0130')).toBe('\u212A\u0130');
  });
});
