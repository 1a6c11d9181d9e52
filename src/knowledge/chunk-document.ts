import { countTokens, pieceTokens, tokenPieces } from './token-counter.js';

/**
 * Splits a document into chunks of at most `size` tokens (cl100k_base), the way a reader would:
 *
 * - Markdown (`text/markdown`): ATX headings (`#` … `######`) open sections and are kept as each
 *   chunk's `headingPath` (`["Setup", "With Ollama"]`); a chunk never spans two sections.
 *   Fenced code blocks and tables are atomic: one that fits in a chunk is never split (a chunk
 *   with too little room left is closed first); one larger than a chunk is split between lines
 *   (code, re-fenced in every piece) or rows (tables, the header and delimiter rows repeated).
 * - Prose is split between sentences (list items between lines), and a sentence longer than a
 *   chunk between tokenizer pieces.
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

const unit = (text: string, kind: UnitKind, joiner: string): Unit => ({ text, tokens: countTokens(text), kind, joiner });

/** Splits text longer than `size` tokens between tokenizer pieces. */
function splitByPieces(text: string, size: number): string[] {
  const out: string[] = [];
  let current = '';
  let tokens = 0;
  for (const piece of tokenPieces(text)) {
    const n = pieceTokens(piece);
    if (tokens + n > size && current !== '') {
      out.push(current);
      current = '';
      tokens = 0;
    }
    current += piece;
    tokens += n;
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

/** A code block as one unit, or re-fenced pieces split between lines when it is too large. */
function codeUnits(lines: string[], size: number, lead: string): Unit[] {
  const whole = unit(lines.join('\n'), 'code', lead);
  if (whole.tokens <= size) return [whole];
  const open = lines[0] ?? '```';
  const fence = FENCE.exec(open)?.[1] ?? '```';
  const body = lines.slice(1, FENCE.test(lines.at(-1) ?? '') && lines.length > 1 ? -1 : undefined);
  const frame = countTokens(`${open}\n\n${fence}`);
  const room = Math.max(1, size - frame);
  const pieces: string[][] = [];
  let current: string[] = [];
  let tokens = 0;
  for (const line of body) {
    const n = countTokens(`${line}\n`);
    if (n > room) {
      if (current.length > 0) pieces.push(current);
      for (const part of splitByPieces(line, room)) pieces.push([part]);
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
  return pieces.map((piece, i) => unit([open, ...piece, fence].join('\n'), 'code', i === 0 ? lead : '\n\n'));
}

/** A table as one unit, or pieces split between rows with the header rows repeated. */
function tableUnits(rows: string[], size: number, lead: string): Unit[] {
  const whole = unit(rows.join('\n'), 'table', lead);
  if (whole.tokens <= size) return [whole];
  const hasDelimiter = rows.length > 1 && /^\s*\|?[\s:|-]+\|?\s*$/.test(rows[1]!) && rows[1]!.includes('-');
  const header = hasDelimiter ? rows.slice(0, 2) : [];
  const body = hasDelimiter ? rows.slice(2) : rows;
  const headerTokens = header.length > 0 ? countTokens(`${header.join('\n')}\n`) : 0;
  const room = Math.max(1, size - headerTokens);
  const pieces: string[][] = [];
  let current: string[] = [];
  let tokens = 0;
  for (const row of body) {
    const n = countTokens(`${row}\n`);
    if (tokens + n > room && current.length > 0) {
      pieces.push(current);
      current = [];
      tokens = 0;
    }
    if (n > room) {
      for (const part of splitByPieces(row, room)) pieces.push([part]);
      continue;
    }
    current.push(row);
    tokens += n;
  }
  if (current.length > 0) pieces.push(current);
  return pieces.map((piece, i) => unit([...header, ...piece].join('\n'), 'table', i === 0 ? lead : '\n\n'));
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
        if (lines[j]!.trim().startsWith(marker[0]!.repeat(marker.length)) && lines[j]!.trim().replace(new RegExp(`^\\${marker[0]}+`), '').trim() === '') break;
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

/** Tokens of a joiner on its own: an upper bound of what it adds (it may merge with the next piece). */
const joinerTokens = (joiner: string) => (joiner === '' ? 0 : joiner === ' ' ? 1 : countTokens(joiner));

/**
 * Whether the count of `previous` then `next` is the sum of their counts: they are joined by
 * one space, `previous` ends in a non-space and `next` starts with one. The tokenizer splits
 * text into pieces first and encodes each on its own, and no piece of cl100k_base's pattern
 * runs from a non-space character into a following space; so the pieces of `a + " " + b` are
 * those of `a` then those of `" " + b`.
 */
const additive = (previous: Unit | undefined, next: Unit) => previous !== undefined && next.joiner === ' ' && !/\s$/.test(previous.text) && !/^\s/.test(next.text);

/**
 * Packs a section's units into chunks, with prose overlap between neighbours. The running count
 * (units plus joiners) never undercounts, so the exact count of the joined text is taken only
 * when the running one passes the limit; from then on, while units join additively, the exact
 * count grows by the next sentence's count instead of counting the whole chunk again, and the
 * emitted chunk reuses it.
 */
function packSection(section: Section, options: ChunkOptions, out: Chunk[]): void {
  let current: Unit[] = [];
  let running = 0;
  let fresh = 0;
  /** The exact count of joinUnits(current), when known. */
  let exact: number | null = null;
  const emit = () => {
    if (fresh === 0) return;
    const text = joinUnits(current);
    out.push({ headingPath: section.headingPath, text, tokens: exact ?? countTokens(text) });
  };
  /** Whether `units` and `next` fit in a chunk; `exact` is their exact count when it was taken. */
  const fits = (units: Unit[], unitsExact: number | null, next: Unit, estimate: number): { ok: boolean; exact: number | null } => {
    if (estimate <= options.size) return { ok: true, exact: null };
    const count = unitsExact !== null && additive(units.at(-1), next) ? unitsExact + countTokens(` ${next.text}`) : countTokens(joinUnits([...units, next]));
    return { ok: count <= options.size, exact: count };
  };
  for (const next of section.units) {
    const added = (current.length > 0 ? joinerTokens(next.joiner) : 0) + next.tokens;
    let joined: number | null = null;
    if (current.length > 0) {
      const check = fits(current, exact, next, running + added);
      joined = check.exact;
      if (!check.ok) {
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
        running = carried.reduce((sum, u, i) => sum + u.tokens + (i > 0 ? joinerTokens(u.joiner) : 0), 0);
        exact = carried.length === 1 ? carried[0]!.tokens : null;
        fresh = 0;
        joined = null;
        if (current.length > 0) {
          const again = fits(current, exact, next, running + joinerTokens(next.joiner) + next.tokens);
          joined = again.exact;
          if (!again.ok) {
            current = [];
            running = 0;
            joined = null;
          }
        }
      }
    }
    exact = current.length === 0 ? next.tokens : joined;
    running += (current.length > 0 ? joinerTokens(next.joiner) : 0) + next.tokens;
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
