// Documents for the ingest and 100,000-chunk benchmarks, made from the project's own markdown so
// their words, lengths and structure (headings, code, tables) are those of real documentation.
// A seeded generator (mulberry32) makes them the same on every run.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORPUS } from './questions.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function readCorpus(files = CORPUS) {
  return files.map((file) => ({ file, text: fs.readFileSync(path.join(root, file), 'utf8') }));
}

export function rng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The markdown files split at blank lines into blocks (paragraphs, lists, tables, code). */
function blocksOf(texts) {
  const blocks = [];
  for (const text of texts) {
    for (const block of text.split(/\n{2,}/)) if (block.trim() !== '' && !block.startsWith('#')) blocks.push(block.trim());
  }
  return blocks;
}

/**
 * `count` synthetic documents: each has a title heading and sections of 2-5 blocks drawn from
 * the project's docs, with a unique reference sentence per section so no two chunks are equal.
 */
export function syntheticDocuments(count, { seed = 42, sections = 4 } = {}) {
  const random = rng(seed);
  const blocks = blocksOf(readCorpus().map((doc) => doc.text));
  const words = [
    ...new Set(
      blocks
        .join(' ')
        .toLowerCase()
        .match(/[a-z]{4,}/g),
    ),
  ];
  const pick = (list) => list[Math.floor(random() * list.length)];
  const docs = [];
  for (let d = 0; d < count; d++) {
    const parts = [`# Note ${d}: ${pick(words)} and ${pick(words)}`];
    for (let s = 0; s < sections; s++) {
      parts.push(`## ${pick(words)} ${pick(words)} ${s}`);
      parts.push(`Reference ${d}.${s}: the ${pick(words)} ${pick(words)} of ${pick(words)} ${pick(words)}.`);
      const n = 2 + Math.floor(random() * 4);
      for (let b = 0; b < n; b++) parts.push(pick(blocks));
    }
    docs.push({ title: `note-${d}`, content: parts.join('\n\n') });
  }
  return docs;
}
