import type { ExecutionRow, StepRow } from '../execution-store.js';
import type { ExecutionRun } from '../run/execution-run.js';
import type { GraphPlan } from '../run/graph-plan.js';
import type { FrameState } from '../run/restore-state.js';

/** A pending execution admitted by this process, with what its first run needs. */
export interface QueuedStart {
  row: ExecutionRow;
  plan: GraphPlan;
  steps: StepRow[];
}

/** A waiting execution whose run this process keeps, so resuming it reads nothing back. */
export interface ParkedRun {
  row: ExecutionRow;
  plan: GraphPlan;
  run: ExecutionRun;
  root: FrameState;
  /** Its `waiting` status is not written yet (it waits for children; see ExecutionRun.advance). */
  deferred: boolean;
}

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

/**
 * Waiting executions kept in memory, least recently parked evicted first. A parent waiting for
 * a child resumes from here when the child ends (no step rows read back, no children queried);
 * an evicted one resumes through the database like any other.
 */
export class ParkedRuns {
  private readonly runs = new Map<string, ParkedRun>();

  constructor(private readonly capacity = 1_000) {}

  get(executionId: string): ParkedRun | undefined {
    return this.runs.get(executionId);
  }

  /** Returns the run evicted to make room, if any. */
  park(parked: ParkedRun): ParkedRun | undefined {
    this.runs.delete(parked.row.id);
    let evicted: ParkedRun | undefined;
    if (this.runs.size >= this.capacity) {
      evicted = this.runs.values().next().value!;
      this.runs.delete(evicted.row.id);
    }
    this.runs.set(parked.row.id, parked);
    return evicted;
  }

  /** Parked runs whose wait is not written yet (left parked). */
  deferred(): ParkedRun[] {
    return [...this.runs.values()].filter((parked) => parked.deferred);
  }

  /** Every parked run, taken out. */
  drain(): ParkedRun[] {
    const all = [...this.runs.values()];
    this.runs.clear();
    return all;
  }

  take(executionId: string): ParkedRun | undefined {
    const parked = this.runs.get(executionId);
    this.runs.delete(executionId);
    return parked;
  }
}
