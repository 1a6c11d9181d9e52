import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { asciiPieces } from './ascii-pieces.js';
import { patternPieces } from './token-counter.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('ASCII pre-tokenization', () => {
  it("splits exactly as the cl100k_base pattern on the project's markdown (ASCII lines)", () => {
    const files = [
      'README.md',
      ...fs.readdirSync(path.join(root, 'docs')).map((f) => `docs/${f}`),
      'src/engine/ARCHITECTURE.md',
      'src/knowledge/chunk-document.ts',
    ];
    for (const file of files) {
      const ascii = fs.readFileSync(path.join(root, file), 'utf8').replace(/[\u0080-\uffff]/g, '?');
      expect(asciiPieces(ascii), file).toEqual(patternPieces(ascii));
    }
  });

  it('splits exactly as the pattern on random ASCII strings heavy in edge cases', () => {
    const alphabet = [
      "'",
      's',
      'S',
      't',
      'r',
      'e',
      'v',
      'l',
      'L',
      'm',
      'd',
      'D',
      'a',
      'Z',
      '0',
      '1',
      '9',
      ' ',
      ' ',
      '  ',
      '\n',
      '\r',
      '\t',
      '\x0b',
      '\x0c',
      '.',
      ',',
      '-',
      '_',
      '(',
      '#',
      '|',
      '`',
      '*',
    ];
    let seed = 12345;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (let n = 0; n < 3000; n++) {
      let text = '';
      const length = Math.floor(random() * 40);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      expect(asciiPieces(text), JSON.stringify(text)).toEqual(patternPieces(text));
    }
  });

  it('handles the named cases', () => {
    for (const text of [
      "don't",
      "they're",
      "I'LL",
      "'s",
      "'x",
      ' hello',
      '  hello',
      '\n\n  \nx',
      'a   ',
      'a  b',
      '12345',
      '...\n\nx',
      ' ...',
      '__init__',
      '',
    ]) {
      expect(asciiPieces(text), JSON.stringify(text)).toEqual(patternPieces(text));
    }
  });
});
