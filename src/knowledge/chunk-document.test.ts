import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunkDocument } from './chunk-document.js';
import { countTokens } from './token-counter.js';

const root = path.resolve(import.meta.dirname, '../..');
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'src/engine/ARCHITECTURE.md',
];

/** Fenced blocks and tables of a markdown text, each as its exact text. */
function blocksOf(markdown: string): { code: string[]; tables: string[] } {
  const lines = markdown.split('\n');
  const code: string[] = [];
  const tables: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (/^ {0,3}(```|~~~)/.test(lines[i]!)) {
      const start = i;
      const fence = lines[i]!.trim().slice(0, 3);
      for (i++; i < lines.length && !lines[i]!.trim().startsWith(fence); i++);
      code.push(lines.slice(start, i + 1).join('\n'));
    } else if (/^\s*\|.*\|\s*$/.test(lines[i]!)) {
      const start = i;
      while (i + 1 < lines.length && /^\s*\|.*\|\s*$/.test(lines[i + 1]!)) i++;
      tables.push(lines.slice(start, i + 1).join('\n'));
    }
  }
  return { code, tables };
}

describe("chunking the project's own markdown", () => {
  for (const file of DOCS) {
    for (const size of [512, 160]) {
      it(`${file} at ${size} tokens: chunks fit, carry heading paths, and keep code blocks and tables whole when they fit`, () => {
        const text = fs.readFileSync(path.join(root, file), 'utf8');
        const chunks = chunkDocument(text, { size, overlap: Math.floor(size / 8), markdown: true });
        expect(chunks.length).toBeGreaterThan(0);
        const firstHeading = /^# (.+)$/m.exec(text)?.[1];
        const longRows = new Set(
          text
            .split('\n')
            .filter((line) => line.trimStart().startsWith('|') && countTokens(line) > size)
            .map((line) => line.trimStart().slice(0, 40)),
        );
        for (const chunk of chunks) {
          expect(chunk.tokens).toBe(countTokens(chunk.text));
          expect(chunk.tokens).toBeLessThanOrEqual(size);
          expect(chunk.text.trim()).toBe(chunk.text);
          if (firstHeading) expect(chunk.headingPath[0]).toBe(firstHeading);
          // A row that fits is never cut: every such table line in a chunk is a whole row (a row
          // longer than a chunk has to be cut, by tokens).
          for (const line of chunk.text.split('\n'))
            if (line.trimStart().startsWith('|') && !longRows.has(line.trimStart().slice(0, 40)))
              expect(line.trimEnd().endsWith('|'), line).toBe(true);
          // Fences come in pairs: no chunk opens a code block it does not close.
          expect((chunk.text.match(/^ {0,3}```/gm) ?? []).length % 2).toBe(0);
        }
        const { code, tables } = blocksOf(text);
        for (const block of [...code, ...tables]) {
          if (countTokens(block) > size - 8) continue;
          expect(
            chunks.some((chunk) => chunk.text.includes(block)),
            `${file}: a block that fits was split:\n${block.slice(0, 200)}`,
          ).toBe(true);
        }
        // Every heading of the document (outside code blocks) is on some chunk's path: no section is lost.
        const outside = code.reduce((rest, block) => rest.replace(block, ''), text);
        const seen = new Set(chunks.flatMap((chunk) => chunk.headingPath));
        for (const match of outside.matchAll(/^#{1,6} +(.+?)\s*$/gm)) expect(seen.has(match[1]!), match[1]).toBe(true);
      });
    }
  }

  it('keeps the heading path of nested sections', () => {
    const chunks = chunkDocument(
      '# Guide\n\nIntro.\n\n## Setup\n\nInstall it.\n\n### With Ollama\n\nPoint base_url at it.\n\n## Use\n\nCall it.\n',
      { size: 512, overlap: 64, markdown: true },
    );
    expect(chunks.map((c) => [c.headingPath, c.text])).toEqual([
      [['Guide'], 'Intro.'],
      [['Guide', 'Setup'], 'Install it.'],
      [['Guide', 'Setup', 'With Ollama'], 'Point base_url at it.'],
      [['Guide', 'Use'], 'Call it.'],
    ]);
  });

  it('closes a chunk rather than split a table that fits in one', () => {
    const prose = 'Words that fill the chunk up. '.repeat(12);
    const table = ['| a | b |', '| --- | --- |', ...Array.from({ length: 8 }, (_, i) => `| row ${i} | value ${i} |`)].join('\n');
    const chunks = chunkDocument(`# T\n\n${prose}\n\n${table}\n`, { size: 120, overlap: 0, markdown: true });
    expect(chunks.filter((c) => c.text.includes(table))).toHaveLength(1);
  });

  it('splits an oversized table between rows, repeating the header rows, and an oversized code block between lines, re-fenced', () => {
    const table = [
      '| name | description |',
      '| --- | --- |',
      ...Array.from({ length: 60 }, (_, i) => `| item ${i} | a description of item number ${i} |`),
    ].join('\n');
    const code = ['```ts', ...Array.from({ length: 60 }, (_, i) => `const value${i} = compute(${i}, 'argument');`), '```'].join('\n');
    const chunks = chunkDocument(`# Big\n\n${table}\n\n${code}\n`, { size: 128, overlap: 16, markdown: true });
    const tableChunks = chunks.filter((c) => c.text.includes('| item'));
    expect(tableChunks.length).toBeGreaterThan(1);
    for (const chunk of tableChunks) expect(chunk.text.startsWith('| name | description |\n| --- | --- |\n')).toBe(true);
    const rows = tableChunks.flatMap((c) => c.text.split('\n').slice(2));
    expect(rows).toEqual(table.split('\n').slice(2));
    const codeChunks = chunks.filter((c) => c.text.includes('const value'));
    expect(codeChunks.length).toBeGreaterThan(1);
    for (const chunk of codeChunks) {
      expect(chunk.text.startsWith('```ts\n')).toBe(true);
      expect(chunk.text.endsWith('\n```')).toBe(true);
      expect(chunk.tokens).toBeLessThanOrEqual(128);
    }
    expect(codeChunks.flatMap((c) => c.text.split('\n').slice(1, -1))).toEqual(code.split('\n').slice(1, -1));
  });

  it('overlaps neighbouring prose chunks of a section by whole sentences within the overlap budget', () => {
    const sentences = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} says something distinct.`);
    const chunks = chunkDocument(sentences.join(' '), { size: 64, overlap: 20, markdown: false });
    expect(chunks.length).toBeGreaterThan(2);
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!.text.split(/(?<=\.)\s/);
      // The longest run of the previous chunk's last sentences that this chunk starts with.
      let shared = '';
      for (let k = previous.length - 1; k > 0; k--) {
        const tail = previous.slice(k).join(' ');
        if (chunks[i]!.text.startsWith(`${tail} `)) shared = tail;
      }
      expect(shared).not.toBe('');
      expect(countTokens(shared)).toBeLessThanOrEqual(20);
    }
    // Without overlap, the sentences appear exactly once.
    const plain = chunkDocument(sentences.join(' '), { size: 64, overlap: 0, markdown: false });
    expect(plain.map((c) => c.text).join(' ')).toBe(sentences.join(' '));
  });

  it('keeps a chunk that starts on an indented list line within the size as stored, without the indent', () => {
    // "  advisory" is two tokens with its indent and "advisory" three without: the third chunk,
    // measured with its indent, fitted in 32 and was stored at 33.
    const list = `- ${Array.from({ length: 28 }, (_, i) => `w${i}`).join(' ')}\n  advisory ${'lock '.repeat(5).trim()}\n  ${'rule '.repeat(23).trim()}`;
    const chunks = chunkDocument(list, { size: 32, overlap: 0, markdown: true });
    expect(chunks.slice(-2).map((c) => c.text.split(' ')[0])).toEqual(['advisory', 'rule']);
    for (const chunk of chunks) {
      expect(chunk.tokens).toBe(countTokens(chunk.text));
      expect(chunk.tokens).toBeLessThanOrEqual(32);
    }
  });

  it('chunks a corpus the same as counting every candidate chunk whole would, with exact counts', () => {
    // The counts come from each unit's own count and a re-scan of each seam (token-counter.ts);
    // checked here against counting each chunk's text afresh on documents with code, tables and lists.
    for (const file of DOCS) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      for (const size of [64, 256]) {
        for (const chunk of chunkDocument(text, { size, overlap: size / 8, markdown: true }))
          expect(chunk.tokens, `${file} ${size}`).toBe(countTokens(chunk.text));
      }
    }
  });

  it('treats text/plain as prose: no headings, code or tables', () => {
    const chunks = chunkDocument('# Not a heading\n\n| not | a table |\n\nJust text.', { size: 512, overlap: 0, markdown: false });
    expect(chunks).toEqual([
      {
        headingPath: [],
        text: '# Not a heading\n\n| not | a table |\n\nJust text.',
        tokens: countTokens('# Not a heading\n\n| not | a table |\n\nJust text.'),
      },
    ]);
  });

  it('cuts a run without spaces larger than a chunk into chunks within the size, losing nothing', () => {
    const run = 'QuickBrownFoxJumpsOverTheLazyDog'.repeat(1500);
    for (const text of [run, `Before. ${run} After.`, `\`\`\`\n${run}\n\`\`\``]) {
      const chunks = chunkDocument(text, { size: 64, overlap: 0, markdown: true });
      expect(chunks.length).toBeGreaterThan(100);
      for (const chunk of chunks) {
        expect(chunk.tokens).toBeLessThanOrEqual(64);
        expect(countTokens(chunk.text)).toBe(chunk.tokens);
      }
      expect(
        chunks
          .map((c) => c.text)
          .join('')
          .replace(/[\s`]/g, ''),
      ).toBe(text.replace(/[\s`]/g, ''));
    }
  });
});
