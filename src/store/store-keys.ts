import { LONE_SURROGATE } from '../lib/storable-text.js';

/** Row keys: 1 to 512 characters (code points) of any Unicode. */
export const MAX_KEY_LENGTH = 512;

/**
 * Why `key` cannot name a row, or null when it can. Besides the length, three refusals keep a
 * key the same everywhere it travels:
 * - NUL: PostgreSQL text cannot hold it;
 * - a lone surrogate: it has no UTF-8 form, so neither a URL nor the database could carry it;
 * - `.` and `..`: URL clients (browsers, curl, fetch) collapse such path segments, even
 *   percent-encoded, so a row with that key could be written but never addressed.
 */
export function keyProblem(key: unknown): string | null {
  if (typeof key !== 'string') return 'the key must be a string';
  if (key.length === 0) return 'the key must not be empty';
  // Code points, not UTF-16 units: an emoji is one character of a key.
  let length = 0;
  for (const _ of key) if (++length > MAX_KEY_LENGTH) return `the key must be at most ${MAX_KEY_LENGTH} characters`;
  if (key.includes('\u0000')) return 'the key must not contain the NUL character';
  if (LONE_SURROGATE.test(key)) return 'the key must be valid Unicode (it has an unpaired surrogate)';
  if (key === '.' || key === '..') return `the key cannot be '${key}': URL clients collapse that path segment`;
  return null;
}
