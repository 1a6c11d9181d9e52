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

export function asciiPieces(text: string): string[] {
  const pieces: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    let end = i + contraction(text, i);
    if (end === i) {
      if (isLetter(c) || (!isNewline(c) && !isLetter(c) && !isDigit(c) && i + 1 < n && isLetter(text.charCodeAt(i + 1)))) {
        // [^\r\n\p{L}\p{N}]?\p{L}+
        end = isLetter(c) ? i : i + 1;
        while (end < n && isLetter(text.charCodeAt(end))) end++;
      } else if (isDigit(c)) {
        // \p{N}{1,3}
        end = i + 1;
        while (end < n && end - i < 3 && isDigit(text.charCodeAt(end))) end++;
      } else if (isPunct(c) || (c === SPACE && i + 1 < n && isPunct(text.charCodeAt(i + 1)))) {
        // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
        end = c === SPACE ? i + 1 : i;
        while (end < n && isPunct(text.charCodeAt(end))) end++;
        while (end < n && isNewline(text.charCodeAt(end))) end++;
      } else {
        // Whitespace: \s*[\r\n]+ (through the run's last newline), else \s+(?!\S) (all but the
        // run's last character, unless the run ends the text), else \s+ (a run of one).
        let run = i;
        let lastNewline = -1;
        while (run < n && isSpace(text.charCodeAt(run))) {
          if (isNewline(text.charCodeAt(run))) lastNewline = run;
          run++;
        }
        if (lastNewline >= 0) end = lastNewline + 1;
        else if (run === n || run - i === 1) end = run;
        else end = run - 1;
      }
    }
    pieces.push(text.slice(i, end));
    i = end;
  }
  return pieces;
}
