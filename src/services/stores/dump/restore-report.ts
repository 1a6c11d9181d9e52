/** Failures, and duplicated keys, listed in the report; past this, failures are only counted. */
export const MAX_REPORTED = 1000;

/** One line that was not imported: its 1-based line number in the body (the header is line 1). */
export interface RestoreFailure {
  line: number;
  /** The line's key, or null when it has none (not JSON, no string key). */
  key: string | null;
  /** Pointers into the line's object (`/row/amount`, `/key`; '' for the line as a whole). */
  errors: { pointer: string; detail: string }[];
}

/** A key met on several valid lines, with those lines: the last one's row is the one kept. */
export interface RestoreDuplicate {
  key: string;
  lines: number[];
}

/** The answer's `meta` (DESIGN.md: store dump / restore). */
export interface RestoreMeta {
  rows_imported: number;
  rows_failed: number;
  failures: RestoreFailure[];
  duplicates: RestoreDuplicate[];
}

/**
 * What a restore tells its caller, gathered while it reads. Failures: the first MAX_REPORTED are
 * listed and all are counted. Duplicates: the first MAX_REPORTED keys met more than once, each
 * with every valid line that carried it (at most MAX_REPORTED).
 *
 * A duplicate whose earlier line was imported by a batch already committed is found by the
 * database (the key exists), which does not know that line: KeyLines remembers the line of every
 * imported key, in 12 bytes a key (12 MB for a million rows), for that one look-up.
 */
export class RestoreReport {
  rowsImported = 0;
  rowsFailed = 0;
  private readonly failures: RestoreFailure[] = [];
  private readonly duplicates = new Map<string, Set<number>>();
  private readonly importedLines = new KeyLines();

  fail(failure: RestoreFailure): void {
    this.rowsFailed += 1;
    if (this.failures.length < MAX_REPORTED) this.failures.push(failure);
  }

  /**
   * A valid line was read. `earlierInBatch` is the line the batch being read already holds for
   * the key (which this one replaces), if any.
   */
  read(key: string, line: number, earlierInBatch: number | undefined): void {
    const known = this.duplicates.get(key);
    if (known) add(known, line);
    else if (earlierInBatch !== undefined) this.open(key, [earlierInBatch, line]);
  }

  /** A batch replaced the row an earlier batch imported: the later line won. */
  replaced(key: string, line: number): void {
    if (!this.duplicates.has(key)) this.open(key, [line]);
  }

  /** A batch inserted the key. */
  imported(key: string, line: number): void {
    this.rowsImported += 1;
    this.importedLines.add(key, line);
  }

  meta(): RestoreMeta {
    return {
      rows_imported: this.rowsImported,
      rows_failed: this.rowsFailed,
      failures: this.failures,
      duplicates: [...this.duplicates].map(([key, lines]) => ({ key, lines: [...lines].sort((a, b) => a - b) })),
    };
  }

  /**
   * A key's first duplicate: until now the key was on at most one valid line of the earlier
   * batches (a second would have opened its entry then), the one imported, if any.
   */
  private open(key: string, lines: number[]): void {
    if (this.duplicates.size >= MAX_REPORTED) return;
    const entry = new Set<number>();
    const earlier = this.importedLines.find(key);
    if (earlier !== undefined) add(entry, earlier);
    for (const line of lines) add(entry, line);
    this.duplicates.set(key, entry);
  }
}

function add(lines: Set<number>, line: number): void {
  if (lines.size < MAX_REPORTED) lines.add(line);
}

/**
 * Line numbers by key, kept as a 53-bit hash of the key (a false match needs two keys of one
 * restore to share it: about one chance in 10^10 at a million keys) and the line, in two typed
 * arrays. Looked up only when a key's first duplicate is reported (at most MAX_REPORTED times), so
 * a look-up scans: 1,000 scans of a million entries take about a second, and are rarer still.
 */
export class KeyLines {
  private hashes = new Float64Array(1024);
  private lines = new Uint32Array(1024);
  private size = 0;

  add(key: string, line: number): void {
    if (this.size === this.hashes.length) {
      const hashes = new Float64Array(this.size * 2);
      hashes.set(this.hashes);
      const lines = new Uint32Array(this.size * 2);
      lines.set(this.lines);
      this.hashes = hashes;
      this.lines = lines;
    }
    this.hashes[this.size] = hash53(key);
    this.lines[this.size] = line;
    this.size += 1;
  }

  /** The line added last for the key, or undefined. */
  find(key: string): number | undefined {
    const hash = hash53(key);
    for (let i = this.size - 1; i >= 0; i--) if (this.hashes[i] === hash) return this.lines[i];
    return undefined;
  }
}

/** cyrb53 (a public-domain string hash): two 32-bit multiply-xorshift lanes folded into 53 bits. */
export function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
