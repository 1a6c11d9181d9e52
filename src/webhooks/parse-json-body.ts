/**
 * JSON delivery bodies: parsed with JSON.parse, refused with a located, version-independent
 * message when invalid, and refused when nested too deep to store.
 */

/**
 * JSON.parse is iterative and accepts any depth, but JSON.stringify (toJsonText, when the
 * payload is stored) recurses: on Node 20 with the default stack it throws past about 4,160
 * levels, fewer when called deep inside a request. 512 leaves an 8x margin; real senders
 * (GitHub, Stripe, Slack) stay under 10.
 */
export const MAX_JSON_DEPTH = 512;

export type JsonBodyResult = { ok: true; value: unknown } | { ok: false; detail: string };

const BYTE_ORDER_MARK = 0xfeff;

export function parseJsonBody(text: string): JsonBodyResult {
  // RFC 8259 section 8.1 lets a parser ignore a leading byte order mark; some .NET senders write one.
  const source = text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    return { ok: false, detail: describeSyntaxError(source) };
  }
  if (nestingDepth(source) > MAX_JSON_DEPTH) {
    return { ok: false, detail: `the request body nests JSON deeper than ${MAX_JSON_DEPTH} levels` };
  }
  return { ok: true, value };
}

/** Deepest bracket nesting of a text already known to be valid JSON; brackets inside strings do not count. */
function nestingDepth(source: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ']' || c === '}') depth--;
  }
  return max;
}

/**
 * V8's own messages change between Node versions, sometimes carry no position and quote a
 * slice of the body; this scanner, run only after JSON.parse failed, finds the first offending
 * character itself so the sender gets a line and column.
 */
function describeSyntaxError(source: string): string {
  const error = findSyntaxError(source);
  if (!error) return 'the request body is not valid JSON';
  const found = error.offset >= source.length ? 'end of input' : describeChar(source, error.offset);
  return `the request body is not valid JSON: expected ${error.expected}, found ${found} at ${lineAndColumn(source, error.offset)}`;
}

interface SyntaxErrorAt {
  offset: number;
  expected: string;
}

type State = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'colon' | 'comma-or-close' | 'end';

const EXPECTED: Record<Exclude<State, 'comma-or-close'>, string> = {
  value: 'a value',
  'value-or-close': "a value or ']'",
  key: 'a property name',
  'key-or-close': "a property name or '}'",
  colon: "':' after a property name",
  end: 'the end of the body',
};

const LITERALS = ['true', 'false', 'null'];

/** An iterative JSON grammar walk; returns null when it finds no error (it then agrees with JSON.parse). */
function findSyntaxError(source: string): SyntaxErrorAt | null {
  const containers: string[] = [];
  let state: State = 'value';
  let i = 0;
  const afterValue = (): State => (containers.length === 0 ? 'end' : 'comma-or-close');
  for (;;) {
    while (i < source.length && ' \t\n\r'.includes(source[i]!)) i++;
    const close = containers.at(-1) === '{' ? '}' : ']';
    const expected = state === 'comma-or-close' ? `',' or '${close}'` : EXPECTED[state];
    if (i >= source.length) return state === 'end' ? null : { offset: i, expected };
    const c = source[i]!;
    const fail = (offset: number, what = expected): SyntaxErrorAt => ({ offset, expected: what });

    if (state === 'value' || state === 'value-or-close') {
      if (state === 'value-or-close' && c === ']') {
        containers.pop();
        i++;
        state = afterValue();
      } else if (c === '{' || c === '[') {
        containers.push(c);
        i++;
        state = c === '{' ? 'key-or-close' : 'value-or-close';
      } else if (c === '"') {
        const end = scanString(source, i);
        if (typeof end !== 'number') return end;
        i = end;
        state = afterValue();
      } else if (c === '-' || (c >= '0' && c <= '9')) {
        const end = scanNumber(source, i);
        if (typeof end !== 'number') return end;
        i = end;
        state = afterValue();
      } else {
        const literal = LITERALS.find((word) => word[0] === c);
        if (!literal) return fail(i);
        for (let k = 1; k < literal.length; k++) {
          if (source[i + k] !== literal[k]) return fail(i + k, `'${literal}'`);
        }
        i += literal.length;
        state = afterValue();
      }
    } else if (state === 'key' || state === 'key-or-close') {
      if (state === 'key-or-close' && c === '}') {
        containers.pop();
        i++;
        state = afterValue();
      } else if (c === '"') {
        const end = scanString(source, i);
        if (typeof end !== 'number') return end;
        i = end;
        state = 'colon';
      } else return fail(i);
    } else if (state === 'colon') {
      if (c !== ':') return fail(i);
      i++;
      state = 'value';
    } else if (state === 'comma-or-close') {
      if (c === ',') state = containers.at(-1) === '{' ? 'key' : 'value';
      else if (c === close) {
        containers.pop();
        state = afterValue();
      } else return fail(i);
      i++;
    } else return fail(i);
  }
}

const SIMPLE_ESCAPES = '"\\/bfnrt';
const HEX_DIGIT = /^[0-9A-Fa-f]$/;

/** From the opening quote; the offset after the closing quote, or where the string goes wrong. */
function scanString(source: string, start: number): number | SyntaxErrorAt {
  let i = start + 1;
  for (;;) {
    if (i >= source.length) return { offset: i, expected: "'\"' to close the string" };
    const c = source[i]!;
    if (c === '"') return i + 1;
    if (c.charCodeAt(0) < 0x20) return { offset: i, expected: 'a string character (control characters must be escaped)' };
    if (c !== '\\') {
      i++;
      continue;
    }
    const escape = source[i + 1];
    if (escape !== undefined && SIMPLE_ESCAPES.includes(escape)) {
      i += 2;
    } else if (escape === 'u') {
      for (let k = 2; k < 6; k++) {
        if (!HEX_DIGIT.test(source[i + k] ?? '')) return { offset: i + k, expected: 'a hex digit in a \\u escape' };
      }
      i += 6;
    } else {
      return { offset: i + 1, expected: 'an escape character (one of " \\ / b f n r t u)' };
    }
  }
}

/** From the sign or first digit; the offset after the number, or where it goes wrong. */
function scanNumber(source: string, start: number): number | SyntaxErrorAt {
  let i = start;
  const isDigit = (offset: number) => {
    const c = source[offset];
    return c !== undefined && c >= '0' && c <= '9';
  };
  const digits = (): number | SyntaxErrorAt => {
    if (!isDigit(i)) return { offset: i, expected: 'a digit' };
    while (isDigit(i)) i++;
    return i;
  };
  if (source[i] === '-') i++;
  if (source[i] === '0') i++;
  else {
    const end = digits();
    if (typeof end !== 'number') return end;
  }
  if (source[i] === '.') {
    i++;
    const end = digits();
    if (typeof end !== 'number') return end;
  }
  if (source[i] === 'e' || source[i] === 'E') {
    i++;
    if (source[i] === '+' || source[i] === '-') i++;
    const end = digits();
    if (typeof end !== 'number') return end;
  }
  return i;
}

function describeChar(source: string, offset: number): string {
  const code = source.codePointAt(offset)!;
  if (code < 0x20 || code === 0x7f || code === 0xfffd) return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  const char = String.fromCodePoint(code);
  return char === "'" ? `"'"` : `'${char}'`;
}

/** 1-based; columns count UTF-16 code units, as editors that report "col" mostly do. */
function lineAndColumn(source: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (source[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}
