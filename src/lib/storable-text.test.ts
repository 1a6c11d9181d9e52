import { describe, expect, it } from 'vitest';
import { findUnstorable, findUnstorableInJson, toStorableText, unstorable } from './storable-text.js';

describe('storable text', () => {
  it('names NUL and unpaired surrogates, and passes pairs', () => {
    expect(unstorable('a\u0000b')).toMatch(/NUL/);
    expect(unstorable('\ud800')).toMatch(/unpaired surrogate/);
    expect(unstorable('x\udc00')).toMatch(/unpaired surrogate/);
    expect(unstorable('\u{1F600} ok')).toBeNull();
  });

  it('points at the first bad string or member name, escaping the pointer', () => {
    expect(findUnstorable({ a: ['ok', { 'b/c': 'x\u0000' }] }, '/data')).toEqual({
      pointer: '/data/a/1/b~1c',
      detail: 'the string at /data/a/1/b~1c contains the NUL character, which cannot be stored',
    });
    expect(findUnstorable({ ok: 1, 'k\u0000': 2 }, '')).toEqual({
      pointer: '/k\u0000',
      detail: 'the member name at /k\u0000 contains the NUL character, which cannot be stored',
    });
    expect(findUnstorable({ a: 1, b: [true, null, 'fine'] }, '')).toBeNull();
  });

  it('walks parsed JSON only when its text has an escape that could be one', () => {
    const check = (text: string) => findUnstorableInJson(text, JSON.parse(text) as unknown);
    expect(check('{"a":"x\\u0000"}')?.pointer).toBe('/a');
    expect(check('{"a":"\\ud800"}')?.pointer).toBe('/a');
    expect(check('{"a":"\\ud83d\\ude00"}')).toBeNull();
    // An escaped backslash followed by "u0000" is six characters of text, not NUL.
    expect(check('{"a":"\\\\u0000"}')).toBeNull();
    expect(check('{"a":"\\\\\\u0000"}')?.pointer).toBe('/a');
    expect(check('{"a":"plain"}')).toBeNull();
  });

  it('makes text storable: NUL dropped, unpaired surrogates replaced, pairs kept', () => {
    expect(toStorableText('a\u0000b\u0000')).toBe('ab');
    expect(toStorableText('x\ud800y\udc00')).toBe('x\ufffdy\ufffd');
    expect(toStorableText('ok \u{1F600}')).toBe('ok \u{1F600}');
  });
});
