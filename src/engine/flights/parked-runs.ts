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
