import type { PendingRow } from './restore-lines.js';
import { hash53 } from './restore-report.js';

/** Fields of an entry, as offsets into the bytes: key, row, created_at, updated_at, end. */
const BOUNDS = 5;

/**
 * The valid rows of the batch a restore is reading, held as UTF-8 in one reused buffer outside
 * the JavaScript heap, with their line numbers and key hashes in typed arrays, until the batch
 * is imported. A key met again in the batch replaces its entry, which moves to the end: the
 * entries stay in the order of the lines that won.
 *
 * Why not a Map of row objects, as before: a batch lives across several young-generation
 * collections while it is read and imported, so V8 promoted every row of it (the object, its
 * key, row text and two times) to the old generation, where the dead batches piled up until a
 * full collection. Restoring 1,000,000 rows of ~200 bytes (bench:stores) grew the server's RSS
 * by 190 to 290 MB that way, and still by 170 MB with the batches read and then dropped
 * without any insert, while parsing, validating and dropping each row at once grew it by 1 to
 * 5 MB. Here a row's objects and strings die young; a batch's strings are made again, 500 rows
 * at a time, only for their statements (restore-batch.ts).
 */
export class PendingRows {
  /** Live entries: the rows the batch holds. */
  size = 0;
  /** Entries, replaced ones included (indexes 0 to count - 1). */
  count = 0;
  /** UTF-8 bytes of the live entries. */
  liveBytes = 0;
  private bytes: Buffer;
  private used = 0;
  private readonly bounds: Uint32Array;
  private readonly lines: Float64Array;
  private readonly hashes: Float64Array;
  private readonly live: Uint8Array;
  /** Open addressing on the key hash: the entry index + 1, 0 for an empty slot. */
  private readonly slots: Int32Array;

  /**
   * `maxRows` live entries at most (the caller imports the batch when it is full); twice as many
   * entries fit before replaced ones are compacted away.
   */
  constructor(
    readonly maxRows: number,
    readonly maxBytes: number,
  ) {
    const capacity = 2 * maxRows;
    this.bytes = Buffer.allocUnsafeSlow(Math.min(maxBytes, 1024 * 1024));
    this.bounds = new Uint32Array(capacity * BOUNDS);
    this.lines = new Float64Array(capacity);
    this.hashes = new Float64Array(capacity);
    this.live = new Uint8Array(capacity);
    let slots = 1;
    while (slots < 2 * capacity) slots *= 2;
    this.slots = new Int32Array(slots);
  }

  /** True when the batch holds `maxRows` rows or `maxBytes` of them: time to import it. */
  get full(): boolean {
    return this.size >= this.maxRows || this.liveBytes >= this.maxBytes;
  }

  /** Adds a row; returns the line of the row it replaced (the same key earlier in the batch), if any. */
  add(row: PendingRow): number | undefined {
    const keyBytes = Buffer.byteLength(row.key);
    const length = keyBytes + Buffer.byteLength(row.row) + row.created_at.length + row.updated_at.length;
    if (this.count === this.lines.length) {
      this.compact();
      if (this.count === this.lines.length)
        throw new Error(`the batch holds ${this.count} rows, over its ${this.maxRows}: import it when it is full`);
    }
    if (this.used + length > this.bytes.length) this.makeRoom(length);
    const index = this.count;
    const at = this.used;
    const b = index * BOUNDS;
    this.bounds[b] = at;
    this.bounds[b + 1] = at + this.bytes.write(row.key, at, 'utf8');
    this.bounds[b + 2] = this.bounds[b + 1]! + this.bytes.write(row.row, this.bounds[b + 1]!, 'utf8');
    this.bounds[b + 3] = this.bounds[b + 2]! + this.bytes.write(row.created_at, this.bounds[b + 2]!, 'latin1');
    this.bounds[b + 4] = this.bounds[b + 3]! + this.bytes.write(row.updated_at, this.bounds[b + 3]!, 'latin1');
    const hash = hash53(row.key);
    this.lines[index] = row.line;
    this.hashes[index] = hash;
    this.live[index] = 1;
    this.used += length;
    this.count += 1;
    this.size += 1;
    this.liveBytes += length;

    const mask = this.slots.length - 1;
    for (let slot = hash % this.slots.length; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry < 0) {
        this.slots[slot] = index + 1;
        return undefined;
      }
      if (this.hashes[entry] === hash && this.sameKey(entry, at, keyBytes)) {
        this.slots[slot] = index + 1;
        this.live[entry] = 0;
        this.size -= 1;
        this.liveBytes -= this.bounds[entry * BOUNDS + 4]! - this.bounds[entry * BOUNDS]!;
        return this.lines[entry];
      }
    }
  }

  /** Empties the batch (its buffer is kept for the next). */
  clear(): void {
    this.size = 0;
    this.count = 0;
    this.liveBytes = 0;
    this.used = 0;
    this.slots.fill(0);
  }

  isLive(index: number): boolean {
    return this.live[index] === 1;
  }

  line(index: number): number {
    return this.lines[index]!;
  }

  key(index: number): string {
    return this.text(index, 0, 'utf8');
  }

  /** The row's JSON text, as it will be stored. */
  row(index: number): string {
    return this.text(index, 1, 'utf8');
  }

  createdAt(index: number): string {
    return this.text(index, 2, 'latin1');
  }

  updatedAt(index: number): string {
    return this.text(index, 3, 'latin1');
  }

  private text(index: number, field: number, encoding: 'utf8' | 'latin1'): string {
    const b = index * BOUNDS + field;
    return this.bytes.toString(encoding, this.bounds[b], this.bounds[b + 1]);
  }

  private sameKey(entry: number, at: number, keyBytes: number): boolean {
    const start = this.bounds[entry * BOUNDS]!;
    return (
      this.bounds[entry * BOUNDS + 1]! - start === keyBytes &&
      this.bytes.compare(this.bytes, start, start + keyBytes, at, at + keyBytes) === 0
    );
  }

  /** Compacts away replaced entries, then grows the buffer if `length` more bytes still do not fit. */
  private makeRoom(length: number): void {
    if (this.used > this.liveBytes) this.compact();
    if (this.used + length <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.used + length) size *= 2;
    const bytes = Buffer.allocUnsafeSlow(size);
    this.bytes.copy(bytes, 0, 0, this.used);
    this.bytes = bytes;
  }

  /** Moves the live entries down over the replaced ones, in order, and rebuilds the key slots. */
  private compact(): void {
    let kept = 0;
    let to = 0;
    this.slots.fill(0);
    const mask = this.slots.length - 1;
    for (let index = 0; index < this.count; index++) {
      if (this.live[index] !== 1) continue;
      const from = index * BOUNDS;
      const start = this.bounds[from]!;
      const end = this.bounds[from + 4]!;
      this.bytes.copy(this.bytes, to, start, end);
      for (let field = 0; field < BOUNDS; field++) this.bounds[kept * BOUNDS + field] = this.bounds[from + field]! - start + to;
      this.lines[kept] = this.lines[index]!;
      this.hashes[kept] = this.hashes[index]!;
      this.live[kept] = 1;
      let slot = this.hashes[kept]! % this.slots.length;
      while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
      this.slots[slot] = kept + 1;
      to += end - start;
      kept += 1;
    }
    this.count = kept;
    this.used = to;
  }
}
