import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { asciiPieces } from './ascii-pieces.js';

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

/** Tokens of one piece (as returned by tokenPieces). */
export function pieceTokens(piece: string): number {
  let count = counts.get(piece);
  if (count === undefined) {
    count = load().encoder.encode(piece).length;
    if (counts.size >= MAX_CACHED_PIECES) counts.clear();
    counts.set(piece, count);
  }
  return count;
}

export function countTokens(text: string): number {
  let total = 0;
  for (const piece of tokenPieces(text)) total += pieceTokens(piece);
  return total;
}
