import { describe, expect, it } from 'vitest';
import { keyProblem, MAX_KEY_LENGTH } from './store-keys.js';

describe('row keys', () => {
  it.each([
    'a',
    'a/b',
    'with space',
    '😀',
    '%',
    '100%',
    'ünïcödé',
    '.hidden',
    '...',
    'a'.repeat(MAX_KEY_LENGTH),
    '😀'.repeat(MAX_KEY_LENGTH),
  ])('accepts %j', (key) => {
    expect(keyProblem(key)).toBeNull();
  });

  it.each([
    ['', 'the key must not be empty'],
    ['a'.repeat(MAX_KEY_LENGTH + 1), 'the key must be at most 512 characters'],
    ['😀'.repeat(MAX_KEY_LENGTH + 1), 'the key must be at most 512 characters'],
    ['a\u0000b', 'the key must not contain the NUL character'],
    ['a\uD800b', 'the key must be valid Unicode (it has an unpaired surrogate)'],
    ['\uDC00', 'the key must be valid Unicode (it has an unpaired surrogate)'],
    ['.', "the key cannot be '.': URL clients collapse that path segment"],
    ['..', "the key cannot be '..': URL clients collapse that path segment"],
  ])('refuses %j', (key, problem) => {
    expect(keyProblem(key)).toBe(problem);
  });

  it('refuses a key that is not a string', () => {
    expect(keyProblem(42)).toBe('the key must be a string');
  });
});
