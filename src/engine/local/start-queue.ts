import type { QueuedStart } from '../flights/parked-runs.js';

/**
 * Pending executions this process admitted, oldest first. Their rows are committed `pending`
 * (the database stays the source of truth: after a restart `start()` finds them there), but a
 * freed slot starts them from here without a query: under load nearly every execution passes
 * through this queue, and the database path (list due rows, load their steps) cost ~0.6 ms of
 * SQLite time each (438 executions/s in the first throughput benchmark). Past `capacity`, new
 * ones are left to the database path.
 */
export class StartQueue {
  /** A ring of entries: `head` is the oldest; taken slots are left undefined until compacted. */
  private entries: (QueuedStart | undefined)[] = [];
  private head = 0;
  private count = 0;

  constructor(private readonly capacity = 10_000) {}

  get size(): number {
    return this.count;
  }

  /** False when full: the caller leaves the execution to the database path. */
  push(entry: QueuedStart): boolean {
    if (this.count >= this.capacity) return false;
    this.entries.push(entry);
    this.count += 1;
    return true;
  }

  /**
   * Removes and returns the oldest entry that `canStart` accepts (others keep their places).
   * The oldest one usually qualifies, so this is O(1) then; shifting a 14,000-entry array on
   * every start cost ~1% of the webhook benchmark's CPU.
   */
  takeFirst(canStart: (entry: QueuedStart) => boolean): QueuedStart | undefined {
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i];
      if (entry === undefined || !canStart(entry)) continue;
      this.entries[i] = undefined;
      this.count -= 1;
      this.compact();
      return entry;
    }
    return undefined;
  }

  remove(executionId: string): void {
    const index = this.entries.findIndex((entry, i) => i >= this.head && entry?.row.id === executionId);
    if (index === -1) return;
    this.entries[index] = undefined;
    this.count -= 1;
    this.compact();
  }

  clear(): void {
    this.entries = [];
    this.head = 0;
    this.count = 0;
  }

  private compact(): void {
    while (this.head < this.entries.length && this.entries[this.head] === undefined) this.head += 1;
    // Drop the taken prefix once it is the larger part, so memory follows the live entries.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}
