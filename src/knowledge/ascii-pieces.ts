/**
 * The pre-tokenization of `cl100k_base`, for ASCII text, as a scanner: the encoding's pattern
 *
 *   ('s|'S|'t|'T|'re|…|'d|'D)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * run as a Unicode regular expression cost a third of ingesting a document (profiled: ~0.16 ms
 * a 512-token chunk on the 2-core VM); this does the same split with character tests. Each
 * branch below is one alternative, tried in the pattern's order, with the pattern's greedy
 * choice. Text with any non-ASCII character goes to the regular expression instead
 * (token-counter.ts); ascii-pieces.test.ts checks both agree on the project's docs and on
 * random strings.
 */
const CR = 13;
const LF = 10;
const SPACE = 32;
const APOSTROPHE = 39;

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number) => c >= 48 && c <= 57;
/** `\s` for ASCII: space, tab, LF, VT, FF, CR. */
const isSpace = (c: number) => c === SPACE || (c >= 9 && c <= 13);
const isNewline = (c: number) => c === CR || c === LF;
const isPunct = (c: number) => !isSpace(c) && !isLetter(c) && !isDigit(c);
const lower = (c: number) => c | 0x20;

/** Length of a contraction (`'s`, `'re`, …, any case) at `i`, or 0. */
function contraction(text: string, i: number): number {
  if (text.charCodeAt(i) !== APOSTROPHE) return 0;
  const a = lower(text.charCodeAt(i + 1));
  if (a === 115 || a === 116 || a === 109 || a === 100) return 2; // s t m d
  const b = lower(text.charCodeAt(i + 2));
  if ((a === 114 && b === 101) || (a === 118 && b === 101) || (a === 108 && b === 108)) return 3; // re ve ll
  return 0;
}

/** Where the piece that starts at `i` ends (the tokenizer's split, for ASCII text). */
export function asciiPieceEnd(text: string, i: number): number {
  const n = text.length;
  const c = text.charCodeAt(i);
  const end = i + contraction(text, i);
  if (end !== i) return end;
  if (isLetter(c) || (!isNewline(c) && !isLetter(c) && !isDigit(c) && i + 1 < n && isLetter(text.charCodeAt(i + 1)))) {
    // [^\r\n\p{L}\p{N}]?\p{L}+
    let e = isLetter(c) ? i : i + 1;
    while (e < n && isLetter(text.charCodeAt(e))) e++;
    return e;
  }
  if (isDigit(c)) {
    // \p{N}{1,3}
    let e = i + 1;
    while (e < n && e - i < 3 && isDigit(text.charCodeAt(e))) e++;
    return e;
  }
  if (isPunct(c) || (c === SPACE && i + 1 < n && isPunct(text.charCodeAt(i + 1)))) {
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    let e = c === SPACE ? i + 1 : i;
    while (e < n && isPunct(text.charCodeAt(e))) e++;
    while (e < n && isNewline(text.charCodeAt(e))) e++;
    return e;
  }
  // Whitespace: \s*[\r\n]+ (through the run's last newline), else \s+(?!\S) (all but the
  // run's last character, unless the run ends the text), else \s+ (a run of one).
  let run = i;
  let lastNewline = -1;
  while (run < n && isSpace(text.charCodeAt(run))) {
    if (isNewline(text.charCodeAt(run))) lastNewline = run;
    run++;
  }
  if (lastNewline >= 0) return lastNewline + 1;
  if (run === n || run - i === 1) return run;
  return run - 1;
}

export function asciiPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length;) {
    const end = asciiPieceEnd(text, i);
    pieces.push(text.slice(i, end));
    i = end;
  }
  return pieces;
}
