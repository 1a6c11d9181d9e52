import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILTIN_DIMENSIONS, builtinEmbed, scanWords, stem, words } from './builtin-embedder.js';

const scanned = (text: string) => {
  const out: string[] = [];
  scanWords(text, (features) => out.push(features.word));
  return out;
};

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);

describe('built-in embedder', () => {
  it('is deterministic, L2-normalised and 256-dimensional', () => {
    const a = builtinEmbed('Backups run every night at two.');
    expect(a).toHaveLength(BUILTIN_DIMENSIONS);
    expect(Array.from(builtinEmbed('Backups run every night at two.'))).toEqual(Array.from(a));
    expect(dot(a, a)).toBeCloseTo(1, 5);
    expect(Array.from(builtinEmbed('the of and'))).toEqual(new Array(BUILTIN_DIMENSIONS).fill(0));
  });

  it('ranks related texts above unrelated ones, across word forms and accents', () => {
    const query = builtinEmbed('how are chunks embedded?');
    const related = builtinEmbed('Embedding runs in the background once a document is chunked.');
    const unrelated = builtinEmbed('The webhook answers 202 immediately.');
    expect(dot(query, related)).toBeGreaterThan(dot(query, unrelated));
    expect(dot(builtinEmbed('café résumé'), builtinEmbed('cafe resume'))).toBeCloseTo(1, 5);
  });

  it('folds, splits and stems words', () => {
    expect(words('Héllo, WORLD_42!')).toEqual(['hello', 'world', '42']);
    expect(['chunks', 'chunking', 'queries', 'embedded', 'classes', 'status'].map(stem)).toEqual([
      'chunk',
      'chunk',
      'query',
      'embedd',
      'class',
      'status',
    ]);
  });

  it("scans the words words() gives, on the project's docs and on random text heavy in folding cases", () => {
    const root = path.resolve(import.meta.dirname, '../..');
    for (const file of ['README.md', ...fs.readdirSync(path.join(root, 'docs')).map((f) => `docs/${f}`)]) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      expect(scanned(text), file).toEqual(words(text));
    }
    // Capital sigma lower-cases by the letters around it (across ' . : ^ `), ligatures and
    // superscripts decompose, marks combine across nothing but letters, NBSP folds to a space.
    const alphabet = [
      'a',
      'Z',
      'q',
      '0',
      '7',
      ' ',
      '\n',
      '-',
      ',',
      "'",
      '.',
      ':',
      '^',
      '`',
      '_',
      '#',
      'Σ',
      'Α',
      'σ',
      'é',
      'e\u0301',
      '\u0301',
      '\u0323',
      'ﬁ',
      '²',
      '\u00a0',
      'İ',
      'ß',
      'Å',
      '—',
      '→',
      '한',
      '\u00a8',
    ];
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (let n = 0; n < 5000; n++) {
      let text = '';
      const length = Math.floor(random() * 24);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      expect(scanned(text), JSON.stringify(text)).toEqual(words(text));
    }
  });

  it('finds a known ASCII word whatever its case, and tells apart words of one hash bucket', () => {
    expect(scanned('Retry RETRY retry')).toEqual(['retry', 'retry', 'retry']);
    expect(Array.from(builtinEmbed('Webhook Retries'))).toEqual(Array.from(builtinEmbed('webhook retries')));
    // "yaczfa" and "glbppa" have the same FNV-1a hash: the second is not taken for the first.
    expect(scanned('yaczfa glbppa Glbppa yaczfa')).toEqual(['yaczfa', 'glbppa', 'glbppa', 'yaczfa']);
    // Thousands of distinct words fill the table's buckets; each still maps to itself.
    const many = Array.from({ length: 40_000 }, (_, i) => `w${i.toString(36)}x`);
    expect(scanned(many.join(' '))).toEqual(many);
    expect(scanned(many.join(' '))).toEqual(many);
  });
});
