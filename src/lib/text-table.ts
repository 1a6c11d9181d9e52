/**
 * The slots of an open-addressing table keyed by text (a key, its 32-bit hash, a value), for
 * scanners that look a piece of text up by the hash of its characters without cutting it out
 * first: the caller hashes, probes from `hash & mask` while `keys[slot]` is set, and checks a
 * slot whose hash matches against the key itself. Linear probing, at most half full.
 *
 * It starts small and doubles as it fills, up to `maxBits`, and past that it is emptied: a
 * table sized for the text actually seen stays in the processor's caches (the ingest
 * benchmark's ~4,300 distinct token pieces sat in 131,072 slots, 2 MB, before), while a large
 * vocabulary still finds most of it known.
 */
export class TextTable<V> {
  keys: (string | undefined)[];
  hashes: Int32Array;
  values: (V | undefined)[];
  mask: number;
  private used = 0;

  constructor(
    bits: number,
    private readonly maxBits: number,
  ) {
    this.keys = new Array<string | undefined>(1 << bits);
    this.hashes = new Int32Array(1 << bits);
    this.values = new Array<V | undefined>(1 << bits);
    this.mask = (1 << bits) - 1;
  }

  /** Stores `key` at `slot`, the empty slot its probe ended on. */
  insert(slot: number, key: string, hash: number, value: V): void {
    if (this.used + 1 > (this.mask + 1) / 2) {
      if (this.mask + 1 >= 1 << this.maxBits) {
        // Full at its largest: emptied (what it held is cheap to find again).
        this.keys.fill(undefined);
        this.values.fill(undefined);
        this.used = 0;
      } else {
        this.grow();
      }
      slot = this.probe(hash);
    }
    this.keys[slot] = key;
    this.hashes[slot] = hash;
    this.values[slot] = value;
    this.used += 1;
  }

  /** Number of keys held. */
  get size(): number {
    return this.used;
  }

  /** The first empty slot of `hash`'s probe (for a key known not to be held). */
  private probe(hash: number): number {
    let slot = hash & this.mask;
    while (this.keys[slot] !== undefined) slot = (slot + 1) & this.mask;
    return slot;
  }

  private grow(): void {
    const { keys, hashes, values } = this;
    const size = (this.mask + 1) * 2;
    this.keys = new Array<string | undefined>(size);
    this.hashes = new Int32Array(size);
    this.values = new Array<V | undefined>(size);
    this.mask = size - 1;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key === undefined) continue;
      const slot = this.probe(hashes[i]!);
      this.keys[slot] = key;
      this.hashes[slot] = hashes[i]!;
      this.values[slot] = values[i];
    }
  }
}
