/**
 * A bounded least-recently-used map whose entries carry the "stamp" of the data they were read
 * from (a version of the tables involved). An entry is served only while the current stamp
 * equals the stored one, so a write anywhere in those tables makes it stale at once.
 */
export class FreshCache<V> {
  private readonly entries = new Map<string, { stamp: string; value: V }>();

  constructor(private readonly capacity: number) {}

  get(key: string, stamp: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.stamp !== stamp) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, stamp: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { stamp, value });
  }

  clear(): void {
    this.entries.clear();
  }
}
