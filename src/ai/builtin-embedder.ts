import { TextTable } from '../lib/text-table.js';

/**
 * The built-in embedder: no network, no downloaded weights, deterministic, so a knowledge base
 * works offline from the first minute. It is a hashed bag of features (the "hashing trick"):
 *
 * - text is folded (NFKD, diacritics removed, lower case) and split into words of letters and
 *   digits; a short English stop-word list is dropped;
 * - each word is reduced by a light suffix stemmer (`chunks`, `chunking` -> `chunk`);
 * - features: the stem (weight 1.0), each pair of neighbouring stems (0.5: phrases such as
 *   "rate limit"), and the character trigrams of the word with boundary marks (0.25 in all per
 *   word: morphology, compounds and typos share trigrams);
 * - a feature's weight is scaled by 1 + ln(count) (sublinear term frequency), hashed with
 *   FNV-1a into one of 256 dimensions with a sign from another bit of the hash (so collisions
 *   cancel rather than pile up), and the vector is L2-normalised: cosine similarity is a dot
 *   product.
 *
 * No package offered a real embedding model that runs on Node 20 without native builds or a
 * model download at run time, and a neural model on two cores would not reach the ingest
 * target (2,000 chunks/s) anyway. What this embedder is worth is measured in
 * bench/results/knowledge.md (recall@5 against keyword search on questions about our docs).
 * Changing anything here changes the vectors: bump BUILTIN_EMBEDDER_KEY so bases re-embed.
 */
export const BUILTIN_DIMENSIONS = 256;
export const BUILTIN_EMBEDDER_KEY = 'builtin:v1';

const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could did do does doing for from had has have how i if in into is it its itself me my no not of on or our ' +
    'so such than that the their them then there these they this those to too was we were what when where which while who whom why will with would you your'
  ).split(' '),
);

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;

const NON_ASCII = /[\u0080-\uffff]/;
const ASCII_WORD = /[A-Za-z0-9]+/g;

/** Folds and splits text into words (shared with the keyword query builder). */
export function words(text: string): string[] {
  // ASCII needs no Unicode folding: the same words, several times faster.
  if (!NON_ASCII.test(text)) return text.toLowerCase().match(ASCII_WORD) ?? [];
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase().match(WORD) ?? [];
}

/** A light suffix stemmer: enough to meet plural and verb forms, cheap enough for 2,000 chunks/s. */
export function stem(word: string): string {
  if (word.length <= 4 || /^\d/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 5) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 6) return word.slice(0, -3);
  if (word.endsWith('ed') && word.length > 5) return word.slice(0, -2);
  if (word.endsWith('es') && /(ch|sh|x|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is')) return word.slice(0, -1);
  return word;
}

/** FNV-1a, 32 bits, over UTF-16 code units (every feature is folded text, so units are stable). */
function fnv1a(text: string, seed: number): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 16777619);
  }
  return hash >>> 0;
}

const UNIGRAM_SEED = 0x811c9dc5;
const BIGRAM_SEED = 0x9e3779b1;
const TRIGRAM_SEED = 0x85ebca6b;

/** The slot of a feature: its dimension, and the sign from bit 31 of its hash (two slots per dimension, so the sublinear scaling sees each sign's weight apart). */
const slotOf = (hash: number) => (hash % BUILTIN_DIMENSIONS) * 2 + (hash & 0x80000000 ? 1 : 0);

/** What a word contributes, worked out once per distinct word (words repeat: most of a text's are known). */
export interface WordFeatures {
  /** The folded word. */
  word: string;
  stop: boolean;
  root: string;
  unigram: number;
  /** FNV-1a state after `root + " "` under the bigram seed: the pair's hash continues from it with the next root. */
  pairPrefix: number;
  trigrams: Int32Array;
  trigramWeight: number;
}

const featureCache = new Map<string, WordFeatures>();
/** Distinct words remembered, at most (a text of unique identifiers must not grow it without bound). */
const MAX_CACHED_WORDS = 100_000;

function featuresOf(word: string): WordFeatures {
  let features = featureCache.get(word);
  if (features !== undefined) return features;
  const stop = STOP_WORDS.has(word);
  const root = stop ? word : stem(word);
  let pairPrefix = BIGRAM_SEED;
  for (let i = 0; i < root.length; i++) pairPrefix = Math.imul(pairPrefix ^ root.charCodeAt(i), 16777619);
  pairPrefix = Math.imul(pairPrefix ^ 32, 16777619);
  // Trigrams of `<word>`, hashed from the character codes (the value fnv1a gives each three-character slice).
  const length = word.length + 2;
  const count = length - 2;
  const trigrams = new Int32Array(count > 1 ? count : 0);
  const code = (k: number) => (k === 0 ? 60 : k === length - 1 ? 62 : word.charCodeAt(k - 1));
  for (let i = 0; i < trigrams.length; i++) {
    let hash = Math.imul(TRIGRAM_SEED ^ code(i), 16777619);
    hash = Math.imul(hash ^ code(i + 1), 16777619);
    hash = Math.imul(hash ^ code(i + 2), 16777619);
    trigrams[i] = slotOf(hash >>> 0);
  }
  features = {
    word,
    stop,
    root,
    unigram: slotOf(fnv1a(root, UNIGRAM_SEED)),
    pairPrefix,
    trigrams,
    trigramWeight: count > 1 ? 0.25 / count : 0,
  };
  if (featureCache.size >= MAX_CACHED_WORDS) featureCache.clear();
  featureCache.set(word, features);
  return features;
}

const isAsciiAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/**
 * An ASCII character at which folding can be done apart on each side: not a letter or digit, and
 * not one of the case-ignorable `'` `.` `:` `^` `` ` `` (lower-casing turns a Greek capital sigma
 * into a final sigma depending on the letters around it, looking across case-ignorable
 * characters). NFKD and removing marks never reach across an ASCII character (a starter).
 */
const isBreak = (c: number) => c < 128 && !isAsciiAlnum(c) && c !== 39 && c !== 46 && c !== 58 && c !== 94 && c !== 96;

/**
 * Known ASCII words by the FNV-1a hash of their lower-cased characters, checked against the word
 * itself (lib/text-table.ts), so a known word is found without cutting it out of the text and
 * lower-casing it (splitting with a regular expression and a map look-up per word were ~40% of
 * embedding a chunk, with the garbage they left).
 */
const known = new TextTable<WordFeatures>(11, 16);

function sameLowered(word: string, text: string, start: number, end: number): boolean {
  if (word.length !== end - start) return false;
  for (let k = 0; k < word.length; k++) {
    const c = text.charCodeAt(start + k);
    if (word.charCodeAt(k) !== (c >= 65 && c <= 90 ? c + 32 : c)) return false;
  }
  return true;
}

function asciiWordAt(text: string, start: number, end: number, hash: number): WordFeatures {
  const { keys, hashes, mask } = known;
  let slot = hash & mask;
  for (;;) {
    const word = keys[slot];
    if (word === undefined) break;
    if (hashes[slot] === hash && sameLowered(word, text, start, end)) return known.values[slot]!;
    slot = (slot + 1) & mask;
  }
  const features = featuresOf(text.slice(start, end).toLowerCase());
  known.insert(slot, features.word, hash, features);
  return features;
}

/**
 * Visits the features of each word of `text`, in order: the words `words(text)` gives. The text
 * is cut at break characters (above) into segments; an ASCII segment's words are scanned in
 * place, a segment with other characters is folded on its own as `words` folds a whole text
 * (the same words, since nothing of folding reaches across a break).
 */
export function scanWords(text: string, visit: (features: WordFeatures) => void): void {
  if (!NON_ASCII.test(text)) {
    scanAsciiWords(text, 0, text.length, visit);
    return;
  }
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (isBreak(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i;
    let ascii = true;
    for (; end < n; end++) {
      const c = text.charCodeAt(end);
      if (c >= 128) ascii = false;
      else if (isBreak(c)) break;
    }
    if (ascii) scanAsciiWords(text, i, end, visit);
    else for (const word of words(text.slice(i, end))) visit(featuresOf(word));
    i = end;
  }
}

/** The words of ASCII `text` between `from` and `end`. */
function scanAsciiWords(text: string, from: number, end: number, visit: (features: WordFeatures) => void): void {
  let i = from;
  while (i < end) {
    let c = text.charCodeAt(i);
    if (!isAsciiAlnum(c)) {
      i++;
      continue;
    }
    const start = i;
    let hash = 0x811c9dc5;
    while (i < end && isAsciiAlnum((c = text.charCodeAt(i)))) {
      hash = Math.imul(hash ^ (c >= 65 && c <= 90 ? c + 32 : c), 16777619);
      i++;
    }
    visit(asciiWordAt(text, start, i, hash));
  }
}

/** The vector of one text (256 float32, L2-normalised; all zeros for a text with no words). */
export function builtinEmbed(text: string): Float32Array {
  const slots = new Float64Array(BUILTIN_DIMENSIONS * 2);
  let previous: WordFeatures | null = null;
  scanWords(text, (features) => {
    if (features.stop) {
      previous = null;
      return;
    }
    const root = features.root;
    slots[features.unigram]! += 1;
    if (previous !== null) {
      let hash = previous.pairPrefix;
      for (let i = 0; i < root.length; i++) hash = Math.imul(hash ^ root.charCodeAt(i), 16777619);
      slots[slotOf(hash >>> 0)]! += 0.5;
    }
    previous = features;
    const { trigrams, trigramWeight } = features;
    for (let i = 0; i < trigrams.length; i++) slots[trigrams[i]!]! += trigramWeight;
  });
  const vector = new Float32Array(BUILTIN_DIMENSIONS);
  for (let slot = 0; slot < slots.length; slot++) {
    const weight = slots[slot]!;
    if (weight === 0) continue;
    // Sublinear term frequency: the tenth mention of a word says less than the first.
    const scaled = weight >= 1 ? 1 + Math.log(weight) : weight;
    vector[slot >> 1]! += slot & 1 ? -scaled : scaled;
  }
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  if (sum > 0) {
    const norm = Math.sqrt(sum);
    for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  }
  return vector;
}
