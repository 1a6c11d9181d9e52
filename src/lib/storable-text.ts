import { escapePointerToken } from './json-pointer.js';

/**
 * Text both databases store as given. PostgreSQL's `text` and `jsonb` refuse the NUL character
 * (the statement fails), and an unpaired surrogate is not Unicode: `jsonb` refuses its escape and
 * UTF-8 turns it into U+FFFD. SQLite would keep both, and the dialects must accept the same
 * values, so both are refused everywhere, with a pointer to the string.
 */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// In JSON text, NUL and unpaired surrogates can only be written as \u escapes, each preceded by
// an odd number of backslashes (an even run is escaped backslashes).
const SUSPECT_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * `text` made storable: NUL characters removed, unpaired surrogates replaced by U+FFFD (what a
 * UTF-8 encoder would write). For text nobody can be asked to fix, such as a model's answer or a
 * chat message kept in an agent's memory, where refusing it would fail the step.
 */
export function toStorableText(text: string): string {
  if (unstorable(text) === null) return text;
  return text.replaceAll('\u0000', '').replace(LONE_SURROGATES, '\uFFFD');
}

/** What makes `text` unstorable ("contains …"), or null. */
export function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'contains the NUL character, which cannot be stored';
  if (LONE_SURROGATE.test(text)) return 'contains an unpaired surrogate (not valid Unicode)';
  return null;
}

export interface UnstorableString {
  /** JSON pointer of the string, or of the member whose name it is. */
  pointer: string;
  detail: string;
}

/** The first string (value or member name) of `value` that cannot be stored, under `pointer`. */
export function findUnstorable(value: unknown, pointer: string): UnstorableString | null {
  if (typeof value === 'string') {
    const problem = unstorable(value);
    return problem ? { pointer, detail: `the string at ${pointer || '/'} ${problem}` } : null;
  }
  if (typeof value !== 'object' || value === null) return null;
  for (const [name, child] of Object.entries(value)) {
    const here = `${pointer}/${escapePointerToken(name)}`;
    const nameProblem = Array.isArray(value) ? null : unstorable(name);
    if (nameProblem) return { pointer: here, detail: `the member name at ${here} ${nameProblem}` };
    const found = findUnstorable(child, here);
    if (found) return found;
  }
  return null;
}

/**
 * findUnstorable over `value` parsed from the JSON `text`, walking it only when the text has an
 * escape that could be one (most text has none: a scan instead of a walk).
 */
export function findUnstorableInJson(text: string, value: unknown): UnstorableString | null {
  if (!text.includes('\\u') || !SUSPECT_ESCAPE.test(text)) return null;
  return findUnstorable(value, '');
}
