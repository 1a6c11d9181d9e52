import { describe, expect, it } from 'vitest';
import { checkRowText, MAX_ROW_BYTES } from './row-text.js';

const check = (row: unknown) => checkRowText(row, JSON.stringify(row));

describe('row text', () => {
  it('accepts ordinary rows, including text that merely spells an escape', () => {
    expect(check({ a: 'plain', b: [1, { c: 'é😀' }] })).toBeNull();
    expect(check({ a: '\\u0000 and \\ud800 written out' })).toBeNull();
    expect(check({ a: '\u0001 control characters are fine' })).toBeNull();
  });

  it('points at a string holding NUL or an unpaired surrogate, in values and member names', () => {
    expect(check({ a: { b: ['x', 'y\u0000'] } })).toEqual({
      pointer: '/a/b/1',
      detail: 'the string at /a/b/1 contains the NUL character, which cannot be stored',
    });
    expect(check({ 'a/b': '\uD800' })).toEqual({
      pointer: '/a~1b',
      detail: 'the string at /a~1b contains an unpaired surrogate (not valid Unicode)',
    });
    expect(check({ ['bad\u0000name']: 1 })).toEqual({
      pointer: '/bad\u0000name',
      detail: 'the member name at /bad\u0000name contains the NUL character, which cannot be stored',
    });
  });

  it('refuses a row over 1 MiB of JSON', () => {
    expect(check({ a: 'x'.repeat(MAX_ROW_BYTES) })).toEqual({ pointer: '', detail: 'row must be at most 1024 KiB of JSON' });
  });
});
