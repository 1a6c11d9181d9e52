import { writeRunCommit, type EffectWrite, type RunCommit, type StepWrite } from '../commit/run-commit.js';
import type { RunNews } from '../commit/run-coordination.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';
import { isRunEnd } from '../statuses.js';
import { serializeStepError, StepError, type SerializedStepError } from '../step-errors.js';
import type { StepEffect } from '../../steps/step-runtime.js';
import type { RunDeps } from './run-types.js';
import type { ErrorRun } from './error-run.js';

/** How an attempt cut short by its process's death is recorded by the run that takes over. */
const INTERRUPTED: SerializedStepError = {
  name: 'StepError',
  code: 'interrupted',
  message:
    'the process running this attempt stopped before it finished (a crash, or a drain past its grace); the next attempt runs it again',
  retryable: true,
  retry_after_ms: null,
};

/** How a step's effect fared in its commit: its result, its error, or the execution had ended. */
export type EffectCommitted =
  { type: 'committed'; output: unknown } | { type: 'failed'; error: SerializedStepError } | { type: 'cancelled' };

/** What a commit carried besides a step's effect, restored when the effect failed (`carry`, `restore`). */
export interface CarriedWrites {
  pending: StepWrite[];
  opening: Partial<ExecutionRow>;
  changes: Partial<ExecutionRow>;
  responseUnsent: boolean;
  stepCount: number;
}

/**
 * What a run has queued for its next commit, and that commit (commit/run-commit.ts writes it):
 * step rows, the execution row's changes, the changes that ride along without calling for a
 * commit of their own (`opening`, see ExecutionRun.advance), and whether a respond step's answer
 * waits to be sent (see ExecutionRun.sendResponse).
 */
export class RunWrites {
  /** Row writes waiting for the next commit: new rows, or updates of a waiting row resumed. */
  private pending: StepWrite[] = [];
  private changes: Partial<ExecutionRow> = {};
  /** Changes that go with the next commit but do not call for one. */
  private opening: Partial<ExecutionRow> = {};
  /** A respond step's answer waits in `changes` for the next commit. */
  private unsent = false;

  constructor(
    private readonly deps: RunDeps,
    private readonly execution: ExecutionRow,
    private stepCount: number,
    readonly savePayloads: boolean,
  ) {}

  /** Changes that ride on the next commit without calling for one. */
  open(opening: Partial<ExecutionRow>): void {
    this.opening = opening;
  }

  /** Whether opening changes still wait for a commit. */
  get opened(): boolean {
    return Object.keys(this.opening).length > 0;
  }

  /** Changes of the execution row for the next commit. */
  change(changes: Partial<ExecutionRow>): void {
    this.changes = Object.assign({}, this.changes, changes);
  }

  /** A respond step's answer (JSON text), committed with the next commit. */
  respond(response: string | null): void {
    this.changes.response = response;
    this.unsent = true;
  }

  get responseUnsent(): boolean {
    return this.unsent;
  }

  get hasRows(): boolean {
    return this.pending.length > 0;
  }

  /** Rows or changes of the execution wait for a commit. */
  get queued(): boolean {
    return this.pending.length > 0 || Object.keys(this.changes).length > 0;
  }

  /**
   * Queues a step row: it replaces the waiting row of a resumed attempt, else it is new. A row
   * that ends its node (completed, skipped, failed without a retry: `final`) is counted.
   */
  record(row: StepRow, resumedStepId?: string, final = true): void {
    if (resumedStepId) row.id = resumedStepId;
    if (final && (row.status === 'completed' || row.status === 'failed' || row.status === 'skipped'))
      this.deps.metrics?.stepFinished(row.status);
    this.pending.push(resumedStepId ? { update: resumedStepId, row } : { insert: row });
  }

  /** Attempts a dead process left `running` are recorded failed (`interrupted`); their nodes run again. */
  interrupted(rows: StepRow[], now: string): void {
    for (const row of rows) {
      const failed: StepRow = Object.assign({}, row, {
        status: 'failed' as const,
        error: JSON.stringify(INTERRUPTED),
        finished_at: now,
        updated_at: now,
      });
      this.pending.push({ update: row.id, row: failed });
    }
  }

  /** What the next commit carries, to be put back if it fails (a step's effect refused). */
  carry(): CarriedWrites {
    const { opening, changes, unsent, stepCount } = this;
    return { pending: this.pending.slice(), opening, changes, responseUnsent: unsent, stepCount };
  }

  /** Nothing of that commit landed: what it carried goes with the next one. */
  restore(carried: CarriedWrites): void {
    this.pending = carried.pending.concat(this.pending);
    this.opening = Object.assign({}, carried.opening, this.opening);
    this.changes = Object.assign({}, carried.changes, this.changes);
    this.unsent = this.unsent || carried.responseUnsent;
    this.stepCount = carried.stepCount;
  }

  /**
   * Commits a step's effect (a store row) in the same transaction as its completed row, at once:
   * the steps after it see the write. An effect that throws a StepError (schema, cap, a key
   * conflict) rolled back with everything of that commit; the attempt is then failed with it,
   * and what else the commit carried waits for the next one.
   */
  async commitEffect(effect: StepEffect, row: StepRow, replaces: string | undefined): Promise<EffectCommitted> {
    const carried = this.carry();
    this.record(row, replaces);
    const applied: EffectWrite = { run: effect, row, output: undefined };
    try {
      return (await this.persist(undefined, [], applied)) ? { type: 'committed', output: applied.output } : { type: 'cancelled' };
    } catch (error) {
      if (!(error instanceof StepError)) throw error;
      // Nothing of that commit landed: what it carried besides the row goes with the next one.
      this.restore(carried);
      return { type: 'failed', error: serializeStepError(error) };
    }
  }

  /**
   * Writes the queued rows (and maybe the execution's new state) in the next group commit. A
   * run that ends also clears kept outputs (payload saving off) and wakes a waiting parent; a
   * run that waits for children is due at once if one of them ended meanwhile. Resolves false
   * when the execution had already ended (cancelled meanwhile): its row is left as it is.
   * `errorRun`: a failure's error workflow execution, inserted in this commit and started once
   * it is durable (error-run.ts).
   */
  persist(final?: Partial<ExecutionRow>, awaited: string[] = [], effect?: EffectWrite, errorRun?: ErrorRun): Promise<boolean> {
    const writes = this.pending;
    this.unsent = false;
    // Object.assign, not spreads: see StepOwner in step-rows.ts (the keys are column names).
    const changes: Partial<ExecutionRow> = Object.assign({}, this.opening, this.changes, final);
    this.pending = [];
    this.changes = {};
    this.opening = {};
    this.stepCount += writes.filter((w) => 'insert' in w).length;
    const { execution } = this;
    const { coordination } = this.deps;
    if (coordination && changes.status === 'waiting') Object.assign(changes, coordination.releaseColumns);
    const commit: RunCommit = {
      execution,
      coordination,
      writes,
      changes,
      stepCount: this.stepCount,
      awaited,
      effect,
      savePayloads: this.savePayloads,
      alsoWrite: errorRun?.admit,
    };
    let written: { current: boolean; news: RunNews | null } = { current: true, news: null };
    const locks =
      isRunEnd(changes.status) && execution.parent_execution_id !== null ? [execution.id, execution.parent_execution_id] : [execution.id];
    return this.deps.batcher
      .write(async (trx) => {
        written = await writeRunCommit(trx, commit);
      }, locks)
      .then(() => {
        const { current, news } = written;
        if (news) coordination?.committed(news);
        if (current && changes.response) this.deps.answers?.responded(execution.id, JSON.parse(changes.response));
        if (current) errorRun?.committed?.();
        return current;
      });
  }
}
