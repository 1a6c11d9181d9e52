import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import {
  countText,
  countTokens,
  joinCounts,
  joinTexts,
  LONG_PIECE,
  pieceTokens,
  startJoin,
  tokenPieces,
  tokensWithNewline,
} from './token-counter.js';

const root = path.resolve(import.meta.dirname, '../..');

/** Random strings heavy in the pattern's edge cases: contractions, digit runs, white space runs, punctuation, non-ASCII letters. */
function randomTexts(count: number, seed: number): string[] {
  const alphabet = [
    "'",
    's',
    'S',
    't',
    're',
    'll',
    'a',
    'Z',
    'word',
    ' word',
    '0',
    '12',
    '345',
    ' ',
    ' ',
    '  ',
    '\n',
    '\n\n',
    '\r',
    '\t',
    '.',
    ',',
    '-',
    '|',
    '`',
    '(',
    '#',
    'é',
    'ü',
    '—',
    '→',
    '日本',
    '😀',
    '\u00a0',
    '½',
  ];
  let state = seed;
  const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  return Array.from({ length: count }, () => {
    let text = '';
    const length = Math.floor(random() * 24);
    for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
    return text;
  });
}

describe('token counting', () => {
  it("counts a text as the sum of its pieces' counts, ASCII or not", () => {
    const texts = [...randomTexts(2000, 1), fs.readFileSync(path.join(root, 'docs/knowledge.md'), 'utf8')];
    for (const text of texts) {
      const expected = tokenPieces(text).reduce((sum, piece) => sum + pieceTokens(piece), 0);
      expect(countText(text).tokens, JSON.stringify(text)).toBe(expected);
      expect(countTokens(text)).toBe(expected);
    }
  });

  it('counts texts joined by any joiner exactly from their own counts (joinCounts re-scans only the seam)', () => {
    const texts = randomTexts(3000, 7);
    for (let i = 0; i + 3 < texts.length; i += 3) {
      for (const joiner of ['', ' ', '\n', '\n\n']) {
        const parts = texts.slice(i, i + 3);
        let joined = startJoin(countText(parts[0]!));
        for (const part of parts.slice(1)) joined = joinCounts(joined, joiner, countText(part));
        const text = parts.join(joiner);
        expect(joined.tokens, JSON.stringify({ parts, joiner })).toBe(countTokens(text));
        // The tail it keeps is the joined text's own.
        expect(text.endsWith(joined.tail)).toBe(true);
      }
    }
  });

  it('joinTexts gives the same counted text as counting the joined text, so further joins stay exact', () => {
    const lines = fs.readFileSync(path.join(root, 'README.md'), 'utf8').split('\n');
    const random = randomTexts(600, 3);
    for (let i = 0; i + 6 < lines.length; i += 5) {
      const parts = [...lines.slice(i, i + 6), random[i % random.length]!];
      const direct = countText(parts.join('\n'));
      const joined = joinTexts(
        parts.map((part) => countText(part)),
        '\n',
      );
      expect(joined.tokens).toBe(direct.tokens);
      expect(joined.headEnds).toEqual(direct.headEnds);
      expect(joined.headUpTo).toEqual(direct.headUpTo);
      expect(joined.tailStart).toBe(direct.tailStart);
      expect(joined.tailTokens).toBe(direct.tailTokens);
      for (const next of random.slice(0, 20)) {
        expect(joinCounts(startJoin(joined), ' ', countText(next)).tokens).toBe(countTokens(`${parts.join('\n')} ${next}`));
      }
    }
  });

  it('counts a text followed by a newline', () => {
    for (const text of ['| a | b |', 'x.', '12', '', 'word  ', "it's"])
      expect(tokensWithNewline(countText(text))).toBe(countTokens(`${text}\n`));
  });

  it('counts a piece longer than LONG_PIECE in slices: exact up to it, never under past it, and a long run at all', () => {
    const exact = new Tiktoken(cl100k);
    const camel = Array.from({ length: 600 }, (_, i) => ['Quick', 'Brown', 'Fox', 'Jumps', 'Lazy', 'Dog'][(i * 7) % 6]).join('');
    expect(tokenPieces(camel)).toEqual([camel]);
    const atLimit = camel.slice(0, LONG_PIECE);
    expect(pieceTokens(atLimit)).toBe(exact.encode(atLimit).length);
    const sliced = pieceTokens(camel);
    expect(sliced).toBeGreaterThanOrEqual(exact.encode(camel).length);
    expect(sliced).toBeLessThanOrEqual(exact.encode(camel).length * 1.02);
    // 200,000 characters without a space: its slices' counts added (the whole merge was hours).
    const run = 'abcdefghij'.repeat(20_000);
    let expected = 0;
    for (let start = 0; start < run.length; start += LONG_PIECE) expected += exact.encode(run.slice(start, start + LONG_PIECE)).length;
    expect(countTokens(run)).toBe(expected);
    // A surrogate pair (an astral letter, so one piece) at a slice's edge stays whole.
    const emoji = `${'x'.repeat(LONG_PIECE - 1)}𝐀${'y'.repeat(10)}`;
    expect(tokenPieces(emoji)).toEqual([emoji]);
    expect(pieceTokens(emoji)).toBe(exact.encode(emoji.slice(0, LONG_PIECE + 1)).length + exact.encode('y'.repeat(10)).length);
  });
});
