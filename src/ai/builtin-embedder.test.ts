import { describe, expect, it } from 'vitest';
import { BUILTIN_DIMENSIONS, builtinEmbed, stem, words } from './builtin-embedder.js';

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
    expect(['chunks', 'chunking', 'queries', 'embedded', 'classes', 'status'].map(stem)).toEqual(['chunk', 'chunk', 'query', 'embedd', 'class', 'status']);
  });
});
