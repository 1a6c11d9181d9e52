import { escapePointer, type SchemaIssue } from './row-schema.js';
import { LONE_SURROGATE } from './store-keys.js';

/** A row's JSON text is at most this long (the API's whole request body is 1 MiB too). */
export const MAX_ROW_BYTES = 1024 * 1024;

// In JSON.stringify output, NUL and unpaired surrogates are the only \u escapes of these
// values, each preceded by an odd number of backslashes (an even run is escaped backslashes).
const SUSPECT_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * What makes a row's text unstorable, beyond its schema: its size, and strings (values or
 * member names) holding NUL or an unpaired surrogate. PostgreSQL's jsonb, which row filters
 * read, refuses both, so one such row would break every filtered read of its store; SQLite
 * would keep them, and both dialects must accept the same rows.
 */
export function checkRowText(row: unknown, text: string): SchemaIssue | null {
  if (Buffer.byteLength(text) > MAX_ROW_BYTES) return { pointer: '', detail: `row must be at most ${MAX_ROW_BYTES / 1024} KiB of JSON` };
  if (!SUSPECT_ESCAPE.test(text)) return null;
  return findBadString(row, '');
}

function findBadString(value: unknown, pointer: string): SchemaIssue | null {
  if (typeof value === 'string') return badString(value) ? { pointer, detail: `${describe(pointer)} ${badString(value)}` } : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [name, child] of Object.entries(value)) {
    const here = `${pointer}/${escapePointer(name)}`;
    const nameProblem = Array.isArray(value) ? null : badString(name);
    if (nameProblem) return { pointer: here, detail: `the member name at ${here} ${nameProblem}` };
    const found = findBadString(child, here);
    if (found) return found;
  }
  return null;
}

function badString(text: string): string | null {
  if (text.includes('\u0000')) return 'contains the NUL character, which cannot be stored';
  if (LONE_SURROGATE.test(text)) return 'contains an unpaired surrogate (not valid Unicode)';
  return null;
}

function describe(pointer: string): string {
  return pointer === '' ? 'the row' : `the string at ${pointer}`;
}
