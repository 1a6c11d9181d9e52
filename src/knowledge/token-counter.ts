import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { TextTable } from '../lib/text-table.js';
import { asciiPieceEnd, asciiPieces } from './ascii-pieces.js';

/**
 * Token counts with OpenAI's `cl100k_base` encoding (js-tiktoken; the ranks ship inside the
 * package, nothing is downloaded). The tokenizer first splits text into pieces with the
 * encoding's pattern and then byte-pair-encodes each piece on its own, so a text's count is the
 * sum of its pieces' counts. Pieces repeat endlessly in prose (words, spaces, punctuation), so
 * their counts are remembered: js-tiktoken encodes ~0.4 MB/s on the 2-core VM, the cache makes
 * counting a chunk of known words a few map look-ups, which the ingest target (2,000 chunks/s of
 * 512 tokens) needs.
 */
let encoder: Tiktoken | null = null;
let pattern: RegExp | null = null;
const counts = new Map<string, number>();
/** A long document of unique identifiers must not grow the cache without bound. */
const MAX_CACHED_PIECES = 200_000;

function load(): { encoder: Tiktoken; pattern: RegExp } {
  if (!encoder || !pattern) {
    encoder = new Tiktoken(cl100k);
    pattern = new RegExp(cl100k.pat_str, 'gu');
  }
  return { encoder, pattern };
}

/**
 * Builds the encoder now (parsing the ranks takes ~0.2 s) instead of in the first request that
 * counts tokens; `serve` calls it at start.
 */
export function loadTokenizer(): void {
  load();
}

const NON_ASCII = /[\u0080-\uffff]/;

/** The tokenizer's pre-tokenization pieces of `text`, in order; joined they give `text` back. */
export function tokenPieces(text: string): string[] {
  if (!NON_ASCII.test(text)) return asciiPieces(text);
  return patternPieces(text);
}

/** The pieces by the encoding's own pattern (any text). */
export function patternPieces(text: string): string[] {
  const { pattern } = load();
  return text.match(pattern) ?? [];
}

/**
 * js-tiktoken's byte-pair merge is quadratic in a piece's length, and a piece is as long as a run
 * without spaces: a 32,000-character run took 58 s to 158 s to count (issue 36, found by the
 * hostile-input work), so a raw document of one long run could hold a worker for hours. A piece
 * longer than this is counted in slices of this length and the counts added (~6 ms a slice, each
 * remembered like any piece). A merge never crosses a slice's edge, so in practice the sum is
 * over the exact count, never under: measured 0.9% over on a camel-case identifier of 8,000
 * characters, 0% on base64, hex and digits (their pieces are short anyway), and up to a third
 * over on a run repeating a few letters. Chunks stay within their budget; such runs make them
 * smaller. Slices of 1,024 were 5x slower for 8% instead of 32% on the worst case.
 */
export const LONG_PIECE = 256;

function encodedLength(piece: string): number {
  let count = counts.get(piece);
  if (count === undefined) {
    count = load().encoder.encode(piece).length;
    if (counts.size >= MAX_CACHED_PIECES) counts.clear();
    counts.set(piece, count);
  }
  return count;
}

/** Where a slice of `text` from `start`, `length` characters long, ends without splitting a surrogate pair. */
export function sliceEnd(text: string, start: number, length: number): number {
  const end = Math.min(start + length, text.length);
  const last = text.charCodeAt(end - 1);
  return end < text.length && last >= 0xd800 && last <= 0xdbff ? end + 1 : end;
}

/** Tokens of one piece (as returned by tokenPieces). */
export function pieceTokens(piece: string): number {
  if (piece.length <= LONG_PIECE) return encodedLength(piece);
  let total = 0;
  for (let start = 0; start < piece.length;) {
    const end = sliceEnd(piece, start, LONG_PIECE);
    total += encodedLength(piece.slice(start, end));
    start = end;
  }
  return total;
}

export function countTokens(text: string): number {
  return countText(text, 0).tokens;
}

/**
 * Piece counts by where the piece lies in a text, for the ASCII scanner: keyed by the FNV-1a
 * hash of the piece's characters and checked against the piece itself (lib/text-table.ts), so
 * known pieces are counted without cutting them out of the text (a string and a map look-up per
 * piece were most of chunking's time: ~45% with the garbage they left).
 */
const table = new TextTable<number>(12, 17);

function tokensAt(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  const { keys, hashes, mask } = table;
  let slot = hash & mask;
  for (;;) {
    const key = keys[slot];
    if (key === undefined) break;
    if (hashes[slot] === hash && key.length === end - start && text.startsWith(key, start)) return table.values[slot]!;
    slot = (slot + 1) & mask;
  }
  const piece = text.slice(start, end);
  const count = pieceTokens(piece);
  table.insert(slot, piece, hash, count);
  return count;
}

/**
 * A text counted once, with what joining it to others needs (`joinCounts`): where its first
 * pieces end and the tokens up to each, and its tail: the pieces that text appended to it may
 * change.
 *
 * Which pieces those are: the pattern has no look-behind, so appending text cannot change a
 * piece whose match never reached the end. Matches that reach it are the last piece (a run of
 * letters, digits or punctuation may go on, `'` may become `'s`) and, when the text ends in
 * white space, every piece that starts in that trailing run: `\s*[\r\n]+` backtracks out of the
 * run to its last newline and takes more of it when the appended text brings another newline
 * (`"x\n "` is `x`, `\n`, ` `, but `"x\n \nz"` is `x`, `\n \n`, `z`). A piece that starts
 * before the run and runs into it (punctuation taking the newlines after it) stops at the first
 * other character whatever follows.
 */
export interface CountedText {
  readonly text: string;
  readonly tokens: number;
  /** More pieces follow those of the head. */
  readonly more: boolean;
  /** The end offsets of the first pieces (up to the `head` asked for), and the tokens up to each, that piece included. */
  readonly headEnds: readonly number[];
  readonly headUpTo: readonly number[];
  /** Where the tail starts (a piece boundary), and its tokens. */
  readonly tailStart: number;
  readonly tailTokens: number;
}

/** Pieces of `next` re-scanned with a join before falling back to all of it. */
const JOIN_WINDOW = 4;

/** `\s` of the pattern (Unicode white space and line terminators). */
function isWhiteSpace(c: number): boolean {
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

export function countText(text: string, head = JOIN_WINDOW): CountedText {
  const headEnds: number[] = [];
  const headUpTo: number[] = [];
  const length = text.length;
  let run = length;
  while (run > 0 && isWhiteSpace(text.charCodeAt(run - 1))) run--;
  // Pieces that start in the trailing white space are looked for only when there is some.
  const runStart = run < length ? run : length + 1;
  let tokens = 0;
  let pieces = 0;
  let lastStart = 0;
  let beforeLast = 0;
  // The first piece that starts in the trailing white space, if any.
  let runPiece = -1;
  let beforeRunPiece = 0;
  // Kept as locals in one loop (a closure per piece kept them in its context: ~20% slower); the
  // ASCII scanner's pieces are counted in place, others come from the pattern.
  const matches = NON_ASCII.test(text) ? patternPieces(text) : null;
  let start = 0;
  for (let m = 0; matches === null ? start < length : m < matches.length; m++) {
    const end = matches === null ? asciiPieceEnd(text, start) : start + matches[m]!.length;
    const count = matches === null ? tokensAt(text, start, end) : pieceTokens(matches[m]!);
    if (runPiece < 0 && start >= runStart) {
      runPiece = start;
      beforeRunPiece = tokens;
    }
    lastStart = start;
    beforeLast = tokens;
    tokens += count;
    if (pieces < head) {
      headEnds.push(end);
      headUpTo.push(tokens);
    }
    pieces += 1;
    start = end;
  }
  const tailStart = runPiece >= 0 ? runPiece : lastStart;
  const tailTokens = tokens - (runPiece >= 0 ? beforeRunPiece : beforeLast);
  return { text, tokens, more: pieces > headEnds.length, headEnds, headUpTo, tailStart, tailTokens };
}

/** Whether the first `count` pieces of `counted` lie before its tail (so text appended to it leaves them as they are). */
const headBeforeTail = (counted: CountedText, count: number) =>
  counted.headEnds.length >= count && counted.headEnds[count - 1]! <= counted.tailStart;

/**
 * The counted text of `parts` joined by `joiner`, from their counts (a code block's lines, a
 * table's rows), without encoding the joined text again: its count and tail by joinCounts, its
 * first pieces from a prefix (those of a prefix that lie before the prefix's tail are the text's).
 */
export function joinTexts(parts: readonly CountedText[], joiner: string): CountedText {
  const text = parts.map((part) => part.text).join(joiner);
  if (parts.length === 0) return countText(text);
  let joined = startJoin(parts[0]!);
  for (let i = 1; i < parts.length; i++) joined = joinCounts(joined, joiner, parts[i]!);
  let head: CountedText;
  for (let end = Math.min(text.length, 64); ; end = Math.min(text.length, end * 4)) {
    head = countText(text.slice(0, end));
    if (end === text.length) return head;
    if (head.more && headBeforeTail(head, JOIN_WINDOW)) break;
  }
  return {
    text,
    tokens: joined.tokens,
    more: true,
    headEnds: head.headEnds,
    headUpTo: head.headUpTo,
    tailStart: text.length - joined.tail.length,
    tailTokens: joined.tailTokens,
  };
}

const EMPTY = countText('');

/** Tokens of the text followed by a newline. */
export function tokensWithNewline(counted: CountedText): number {
  return joinCounts(startJoin(counted), '\n', EMPTY).tokens;
}

/** The count of a text built by joining counted texts, and its tail (what the next join may change). */
export interface JoinedCount {
  readonly tokens: number;
  readonly tail: string;
  readonly tailTokens: number;
}

export function startJoin(first: CountedText): JoinedCount {
  return { tokens: first.tokens, tail: first.text.slice(first.tailStart), tailTokens: first.tailTokens };
}

/**
 * The exact count of `joined + joiner + next.text`, re-scanning only around the seam: the scan
 * restarts at the tail of what is joined (what came before it cannot change, see CountedText)
 * and runs over the joiner into `next`'s first pieces until it lands on one of `next`'s own piece
 * boundaries: from there the text is `next`'s, and so are its pieces (no look-behind), whose
 * counts are reused. A window cut short has a tail of its own that the cut may have made wrong,
 * so a boundary is only taken before that tail; with none found, all of `next` is scanned with
 * the seam.
 */
export function joinCounts(joined: JoinedCount, joiner: string, next: CountedText): JoinedCount {
  const offset = joined.tail.length + joiner.length;
  const base = joined.tokens - joined.tailTokens;
  const k = Math.min(JOIN_WINDOW, next.headEnds.length);
  if (next.more && k > 0) {
    const window = countText(joined.tail + joiner + next.text.slice(0, next.headEnds[k - 1]), Number.POSITIVE_INFINITY);
    let j = 0; // next's pieces ending before the scan
    for (let i = 0; i < window.headEnds.length && window.headEnds[i]! <= window.tailStart; i++) {
      const at = window.headEnds[i]! - offset;
      if (at < 0) continue;
      while (j < k && next.headEnds[j]! < at) j++;
      if (at > next.tailStart) break;
      // A boundary of next before its tail: its start (at 0), or the end of its piece j.
      if (at === 0 || (j < k && next.headEnds[j] === at)) {
        const used = at === 0 ? 0 : j + 1;
        const rest = next.tokens - (used === 0 ? 0 : next.headUpTo[used - 1]!);
        // The rest is next's own pieces, its tail among them: that tail is the joined text's.
        return { tokens: base + window.headUpTo[i]! + rest, tail: next.text.slice(next.tailStart), tailTokens: next.tailTokens };
      }
    }
  }
  const whole = countText(joined.tail + joiner + next.text, 0);
  return { tokens: base + whole.tokens, tail: whole.text.slice(whole.tailStart), tailTokens: whole.tailTokens };
}
