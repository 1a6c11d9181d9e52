import {
  countText,
  countTokens,
  joinCounts,
  joinTexts,
  LONG_PIECE,
  pieceTokens,
  sliceEnd,
  startJoin,
  tokenPieces,
  tokensWithNewline,
  type CountedText,
  type JoinedCount,
} from './token-counter.js';

/**
 * Splits a document into chunks of at most `size` tokens (cl100k_base), the way a reader would:
 *
 * - Markdown (`text/markdown`): ATX headings (`#` … `######`) open sections and are kept as each
 *   chunk's `headingPath` (`["Setup", "With Ollama"]`); a chunk never spans two sections.
 *   Fenced code blocks and tables are atomic: one that fits in a chunk is never split (a chunk
 *   with too little room left is closed first); one larger than a chunk is split between lines
 *   (code, re-fenced in every piece) or rows (tables, the header and delimiter rows repeated).
 * - Prose is split between sentences (list items between lines), and a sentence longer than a
 *   chunk between tokenizer pieces; a single piece longer than a chunk between characters.
 * - Plain text (`text/plain`) has no headings, code or tables: paragraphs and sentences only.
 *
 * Overlap: a new chunk of the same section starts with the trailing sentences of the previous
 * chunk, up to `overlap` tokens; code and tables are never repeated as overlap.
 */
export interface Chunk {
  headingPath: string[];
  text: string;
  tokens: number;
}

export interface ChunkOptions {
  size: number;
  overlap: number;
  markdown: boolean;
}

type UnitKind = 'prose' | 'code' | 'table';

/** An atomic piece of a chunk and what joins it to the piece before it. */
interface Unit {
  text: string;
  tokens: number;
  /** The text's pieces and their counts: a chunk's count is built from its units' (token-counter.ts). */
  counted: CountedText;
  kind: UnitKind;
  joiner: string;
}

interface Section {
  headingPath: string[];
  units: Unit[];
}

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/;
const SENTENCE_END = /(?<=[.!?:;])\s+(?=\S)/u;

function unit(text: string, kind: UnitKind, joiner: string, counted = countText(text)): Unit {
  return { text, tokens: counted.tokens, counted, kind, joiner };
}

/**
 * A single tokenizer piece over `size` tokens (a run without spaces: base64, a long identifier),
 * cut between characters into parts of at most `size` tokens each. Without this such a run was
 * one chunk of any size (320,000 characters: 40,000 tokens), which no embedder takes.
 */
function slicesWithin(piece: string, size: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < piece.length) {
    let length = LONG_PIECE;
    let end = sliceEnd(piece, start, length);
    while (length > 1 && pieceTokens(piece.slice(start, end)) > size) {
      length = Math.ceil(length / 2);
      end = sliceEnd(piece, start, length);
    }
    out.push(piece.slice(start, end));
    start = end;
  }
  return out;
}

/** Splits text longer than `size` tokens between tokenizer pieces (inside a piece too large on its own). */
function splitByPieces(text: string, size: number): string[] {
  const out: string[] = [];
  let current = '';
  let tokens = 0;
  for (const whole of tokenPieces(text)) {
    const wholeTokens = pieceTokens(whole);
    for (const piece of wholeTokens > size ? slicesWithin(whole, size) : [whole]) {
      const n = piece === whole ? wholeTokens : pieceTokens(piece);
      if (tokens + n > size && current !== '') {
        out.push(current);
        current = '';
        tokens = 0;
      }
      current += piece;
      tokens += n;
    }
  }
  if (current.trim() !== '') out.push(current);
  return out;
}

/** Prose as sentence units (list items as line units); the first joins with `lead`. */
function proseUnits(paragraph: string, size: number, lead: string): Unit[] {
  const lines = paragraph.split('\n');
  const isList = lines.some((line) => LIST_ITEM.test(line));
  const parts = isList ? lines : paragraph.replace(/\s*\n\s*/g, ' ').split(SENTENCE_END);
  const units: Unit[] = [];
  for (const part of parts) {
    if (part.trim() === '') continue;
    const joiner = units.length === 0 ? lead : isList ? '\n' : ' ';
    const whole = unit(part, 'prose', joiner);
    if (whole.tokens <= size) units.push(whole);
    else splitByPieces(part, size).forEach((piece, i) => units.push(unit(piece, 'prose', i === 0 ? joiner : '')));
  }
  return units;
}

/**
 * A code block as one unit, or re-fenced pieces split between lines when it is too large. Each
 * line is counted once; the block's and the pieces' counts are joined from the lines' (a large
 * block was counted three times: whole, by line, by piece).
 */
function codeUnits(lines: string[], size: number, lead: string): Unit[] {
  const counted = lines.map((line) => countText(line));
  const whole = unit(lines.join('\n'), 'code', lead, joinTexts(counted, '\n'));
  if (whole.tokens <= size) return [whole];
  const open = lines[0] ?? '```';
  const fence = FENCE.exec(open)?.[1] ?? '```';
  const closed = FENCE.test(lines.at(-1) ?? '') && lines.length > 1;
  const body = counted.slice(1, closed ? -1 : undefined);
  const openCounted = counted[0] ?? countText(open);
  const fenceCounted = countText(fence);
  const frame = countTokens(`${open}\n\n${fence}`);
  const room = Math.max(1, size - frame);
  const pieces: CountedText[][] = [];
  let current: CountedText[] = [];
  let tokens = 0;
  for (const line of body) {
    const n = tokensWithNewline(line);
    if (n > room) {
      if (current.length > 0) pieces.push(current);
      for (const part of splitByPieces(line.text, room)) pieces.push([countText(part)]);
      current = [];
      tokens = 0;
      continue;
    }
    if (tokens + n > room && current.length > 0) {
      pieces.push(current);
      current = [];
      tokens = 0;
    }
    current.push(line);
    tokens += n;
  }
  if (current.length > 0) pieces.push(current);
  return pieces.map((piece, i) => {
    const joined = joinTexts([openCounted, ...piece, fenceCounted], '\n');
    return unit(joined.text, 'code', i === 0 ? lead : '\n\n', joined);
  });
}

/** A table as one unit, or pieces split between rows with the header rows repeated; rows are counted once (as code lines are). */
function tableUnits(rows: string[], size: number, lead: string): Unit[] {
  const counted = rows.map((row) => countText(row));
  const whole = unit(rows.join('\n'), 'table', lead, joinTexts(counted, '\n'));
  if (whole.tokens <= size) return [whole];
  const hasDelimiter = rows.length > 1 && /^\s*\|?[\s:|-]+\|?\s*$/.test(rows[1]!) && rows[1]!.includes('-');
  const header = hasDelimiter ? counted.slice(0, 2) : [];
  const body = hasDelimiter ? counted.slice(2) : counted;
  const headerTokens = header.length > 0 ? tokensWithNewline(joinTexts(header, '\n')) : 0;
  const room = Math.max(1, size - headerTokens);
  const pieces: CountedText[][] = [];
  let current: CountedText[] = [];
  let tokens = 0;
  for (const row of body) {
    const n = tokensWithNewline(row);
    if (tokens + n > room && current.length > 0) {
      pieces.push(current);
      current = [];
      tokens = 0;
    }
    if (n > room) {
      for (const part of splitByPieces(row.text, room)) pieces.push([countText(part)]);
      continue;
    }
    current.push(row);
    tokens += n;
  }
  if (current.length > 0) pieces.push(current);
  return pieces.map((piece, i) => {
    const joined = joinTexts([...header, ...piece], '\n');
    return unit(joined.text, 'table', i === 0 ? lead : '\n\n', joined);
  });
}

/** Markdown (or plain text) as sections of units. */
function sectionsOf(text: string, options: ChunkOptions): Section[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const sections: Section[] = [{ headingPath: [], units: [] }];
  const headings: { level: number; title: string }[] = [];
  let paragraph: string[] = [];
  const current = () => sections.at(-1)!;
  const lead = () => (current().units.length === 0 ? '' : '\n\n');
  const flush = () => {
    const body = paragraph.join('\n').trim();
    paragraph = [];
    if (body !== '') current().units.push(...proseUnits(body, options.size, lead()));
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (!options.markdown) {
      paragraph.push(line);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      const level = heading[1]!.length;
      while (headings.length > 0 && headings.at(-1)!.level >= level) headings.pop();
      headings.push({ level, title: heading[2]!.trim() });
      sections.push({ headingPath: headings.map((h) => h.title), units: [] });
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1]!;
      const block = [line];
      let j = i + 1;
      for (; j < lines.length; j++) {
        block.push(lines[j]!);
        if (
          lines[j]!.trim().startsWith(marker[0]!.repeat(marker.length)) &&
          lines[j]!.trim()
            .replace(new RegExp(`^\\${marker[0]}+`), '')
            .trim() === ''
        )
          break;
      }
      i = j;
      current().units.push(...codeUnits(block, options.size, lead()));
      continue;
    }
    if (TABLE_ROW.test(line)) {
      flush();
      const rows = [line];
      while (i + 1 < lines.length && TABLE_ROW.test(lines[i + 1]!)) rows.push(lines[++i]!);
      current().units.push(...tableUnits(rows, options.size, lead()));
      continue;
    }
    paragraph.push(line);
  }
  flush();
  return sections.filter((section) => section.units.length > 0);
}

function joinUnits(units: Unit[]): string {
  return units.map((u, i) => (i === 0 ? u.text : u.joiner + u.text)).join('');
}

/** Tokens of a joiner on its own: what the overlap budget reserves for it. */
const joinerTokens = (joiner: string) => (joiner === '' ? 0 : joiner === ' ' ? 1 : countTokens(joiner));

/**
 * A chunk's exact counts as units are added: of its units joined (what decides where it ends),
 * and, when it starts on an indented line (a list item's continuation), of its text as stored,
 * without the indent. Both must be within the size: trimming can add a token (the indent's
 * removal changes how the first word splits), and counting only the joined units let a chunk
 * of docs/deploy.md reach 161 tokens at a size of 160.
 */
interface ChunkCount {
  joined: JoinedCount;
  stored: JoinedCount | null;
}

function startCount(first: Unit): ChunkCount {
  const trimmed = first.text.trimStart();
  return { joined: startJoin(first.counted), stored: trimmed === first.text ? null : startJoin(countText(trimmed)) };
}

function grow(count: ChunkCount, next: Unit): ChunkCount {
  return {
    joined: joinCounts(count.joined, next.joiner, next.counted),
    stored: count.stored && joinCounts(count.stored, next.joiner, next.counted),
  };
}

const fitsIn = (count: ChunkCount, size: number) => count.joined.tokens <= size && (count.stored === null || count.stored.tokens <= size);

/** The count of `units` (null for none). */
function countUnits(units: Unit[]): ChunkCount | null {
  let count: ChunkCount | null = null;
  for (const u of units) count = count === null ? startCount(u) : grow(count, u);
  return count;
}

/**
 * Packs a section's units into chunks, with prose overlap between neighbours. The chunk's exact
 * count is kept as units are added: each unit's text was counted once, and a join re-scans only
 * the seam (joinCounts), so no chunk's text is encoded again. Counting every candidate chunk whole
 * made chunking cost ~3 times counting the document once.
 */
function packSection(section: Section, options: ChunkOptions, out: Chunk[]): void {
  let current: Unit[] = [];
  let fresh = 0;
  let count: ChunkCount | null = null;
  const emit = () => {
    if (fresh === 0) return;
    out.push({ headingPath: section.headingPath, text: joinUnits(current).trimStart(), tokens: (count!.stored ?? count!.joined).tokens });
  };
  for (const next of section.units) {
    let grown: ChunkCount | null = count === null ? null : grow(count, next);
    if (grown !== null && !fitsIn(grown, options.size)) {
      emit();
      // Overlap: trailing prose of the chunk just closed, within the budget and leaving room for `next`.
      const carried: Unit[] = [];
      let budget = Math.min(options.overlap, options.size - next.tokens - 2);
      for (let k = current.length - 1; k >= 0 && budget > 0; k--) {
        const previous = current[k]!;
        const cost = previous.tokens + joinerTokens(previous.joiner);
        if (previous.kind !== 'prose' || cost > budget) break;
        carried.unshift(previous);
        budget -= cost;
      }
      current = carried;
      count = countUnits(carried);
      fresh = 0;
      grown = count === null ? null : grow(count, next);
      if (grown !== null && !fitsIn(grown, options.size)) {
        current = [];
        grown = null;
      }
    }
    count = grown ?? startCount(next);
    current.push(next);
    fresh += 1;
  }
  emit();
}

export function chunkDocument(text: string, options: ChunkOptions): Chunk[] {
  const chunks: Chunk[] = [];
  for (const section of sectionsOf(text, options)) packSection(section, options, chunks);
  return chunks.map((chunk) => {
    const trimmed = chunk.text.trim();
    return trimmed === chunk.text ? chunk : { ...chunk, text: trimmed, tokens: countTokens(trimmed) };
  });
}
