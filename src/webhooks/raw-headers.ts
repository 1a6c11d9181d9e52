/**
 * Header look-up over Node's `IncomingMessage.rawHeaders` (alternating name, value, in arrival
 * order). The parsed `headers` object cannot be used for credentials: Node joins a repeated
 * header with ", " (or keeps only the first, depending on the name), so a second value could
 * ride along unnoticed. Here a repeated credential header is an error.
 */

export type SingleHeader = { ok: true; value: string } | { ok: false; reason: string };

/**
 * The one value of the header `name` (matched case-insensitively), with surrounding optional
 * whitespace (spaces and tabs, RFC 9110 OWS) removed. Fails when the header is absent, appears
 * more than once in any case, or rawHeaders is not a list of name/value string pairs.
 */
export function singleHeader(rawHeaders: readonly string[], name: string): SingleHeader {
  if (!Array.isArray(rawHeaders) || rawHeaders.length % 2 !== 0) {
    return { ok: false, reason: 'raw headers are not name/value pairs' };
  }
  const wanted = asciiLowercase(name);
  let found: string | undefined;
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const key = rawHeaders[i];
    const value = rawHeaders[i + 1];
    if (typeof key !== 'string' || typeof value !== 'string') {
      return { ok: false, reason: 'raw headers are not name/value pairs' };
    }
    if (asciiLowercase(key) !== wanted) continue;
    count += 1;
    found = value;
  }
  if (found === undefined) return { ok: false, reason: `missing header ${wanted}` };
  if (count > 1) return { ok: false, reason: `header ${wanted} appears ${count} times` };
  return { ok: true, value: trimOws(found) };
}

/**
 * Header names are ASCII tokens and compare ASCII-case-insensitively. `toLowerCase()` would
 * also fold non-ASCII letters (the Kelvin sign U+212A becomes "k"), making two names equal
 * that HTTP treats as different.
 */
export function asciiLowercase(value: string): string {
  return value.replace(/[A-Z]/g, (letter) => String.fromCharCode(letter.charCodeAt(0) + 32));
}

function trimOws(value: string): string {
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}
