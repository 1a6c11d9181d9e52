import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';
import { clearStepPayloads, insertStep, listEndedChildren, updateExecution, updateStep, wakeParent } from '../execution-store.js';
import type { RunCoordination, RunNews } from './run-coordination.js';
import type { StepEffect } from '../../steps/step-runtime.js';
import { isRunEnd } from '../statuses.js';
import { json } from './step-rows.js';

/** A step's effect riding on a commit, and what it answered there (see ExecutionRun.commitEffect). */
export interface EffectWrite {
  run: StepEffect;
  row: StepRow;
  output: unknown;
}

/** A step row a commit of a run writes: new, or replacing the waiting row of a resumed attempt. */
export type StepWrite = { insert: StepRow } | { update: string; row: StepRow };

/** An execution's row is updated only while it has not ended: a cancel wins over a run still finishing. */
const LIVE_STATUSES = ['pending', 'running', 'waiting'] as const;

/** One commit of a run, as ExecutionRun.persist gathered it (execution-run.ts). */
export interface RunCommit {
  execution: ExecutionRow;
  /** Set in a cluster: the commit is conditional on this worker's lease and announced to the others. */
  coordination: RunCoordination | undefined;
  writes: readonly StepWrite[];
  /** The execution row's changes (empty: none); `step_count` and a due `run_at` are added here. */
  changes: Partial<ExecutionRow>;
  stepCount: number;
  /** The children a commit of `waiting` awaits. */
  awaited: string[];
  effect: EffectWrite | undefined;
  savePayloads: boolean;
  /** Written once the execution's update is known to land (a failure's error workflow execution, run/error-run.ts). */
  alsoWrite?: (trx: Transaction<Database>) => Promise<void>;
}

/**
 * Writes one commit of a run in the group commit's transaction (write-batcher.ts), which may run
 * it more than once (a buffered attempt, then a transaction): the step rows, the execution's
 * changes, a step's effect, and at the end the kept outputs cleared (payload saving off) and a
 * waiting parent woken. Alone (SQLite), `current` is false when the execution had already
 * ended (cancelled meanwhile): its row is left as it is and nothing after it is written; in a
 * cluster such a commit fails instead (LeaseLostError, RunCoordination.writeExecution), and `news` is what it
 * announced to the other processes.
 */
export async function writeRunCommit(trx: Transaction<Database>, commit: RunCommit): Promise<{ current: boolean; news: RunNews | null }> {
  const { execution, coordination, changes, stepCount, effect } = commit;
  const ends = isRunEnd(changes.status);
  // A commit that changes the execution also records its step count.
  const changesRow = Object.keys(changes).length > 0;
  if (changesRow) changes.step_count = stepCount;
  if (coordination) {
    // First the execution, conditional on this worker's lease: if another worker took it
    // over (this one paused past its lease) or it was cancelled, nothing of this commit may
    // land, or a step would be recorded twice.
    await coordination.writeExecution(trx, execution.id, changes, commit.awaited);
  }
  if (effect) {
    // Before the rows: the effect's result is the output its completed row records.
    effect.output = await effect.run(trx);
    effect.row.output = json(effect.output === undefined ? null : effect.output);
    effect.row.output_bytes = effect.row.output === null ? null : Buffer.byteLength(effect.row.output);
  }
  for (const write of commit.writes) {
    if ('insert' in write) {
      await insertStep(trx, write.insert);
    } else {
      const { id: _id, inserted_at: _inserted, ...fields } = write.row;
      await updateStep(trx, write.update, fields);
    }
  }
  if (!coordination) {
    if (changes.status === 'waiting' && changes.run_at === null && (await listEndedChildren(trx, commit.awaited)).length > 0)
      changes.run_at = changes.updated_at!;
    if (changesRow && !(await updateExecution(trx, execution.id, changes, LIVE_STATUSES))) return { current: false, news: null };
  }
  if (commit.alsoWrite) await commit.alsoWrite(trx);
  if (ends && !commit.savePayloads) await clearStepPayloads(trx, execution.id);
  const wokeParent = ends && execution.parent_execution_id !== null;
  if (wokeParent && coordination) await coordination.wakeParent(trx, execution.parent_execution_id!, execution.id, changes.updated_at!);
  else if (wokeParent) await wakeParent(trx, execution.parent_execution_id!, execution.id, changes.updated_at!);
  if (!coordination) return { current: true, news: null };
  const news: RunNews = {
    execution,
    wokeParent,
    dueAt: changes.status === 'waiting' ? (changes.run_at ?? null) : null,
    response: changes.response ?? null,
    ended: ends ? { status: changes.status as 'completed' | 'failed', output: changes.output ?? null, error: changes.error ?? null } : null,
  };
  await coordination.announce(trx, news);
  return { current: true, news };
}
