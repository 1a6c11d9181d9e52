import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { lockExecutions } from './cluster-store.js';
import { listEndedChildren, wakeParent, type ExecutionRow } from '../execution-store.js';
import { LeaseLostError } from '../commit/run-coordination.js';

/**
 * A worker's lease checks (Cluster implements them). In a group commit that gathers them
 * (cluster-store.ts `gather`) each answers true and the check is made with the batch's others at
 * its end, failing the commit with `LeaseLostError`.
 */
export interface LeaseChecks {
  /** Whether the execution is still this process's (its lease held). */
  holds(trx: Transaction<Database>, executionId: string): Promise<boolean>;
  /**
   * Writes the execution's changes if it is still live and this process's, renewing the lease
   * unless the changes give it up: one statement for the check and the write. False: neither.
   */
  updateHeld(trx: Transaction<Database>, executionId: string, changes: Partial<ExecutionRow>): Promise<boolean>;
}

/**
 * The execution row's part of a run's commit when several processes share the database: written
 * only while this worker holds the lease (else nothing of the commit may land: `LeaseLostError`).
 *
 * A run that waits only for children (`run_at` null) must not miss a child that ended meanwhile
 * in another process (a lost wake-up: the parent would wait forever). Under READ COMMITTED the
 * order decides it: the execution's row is locked first and the children are read after, in a
 * later statement, which sees every child end committed before the lock was granted; a child
 * ending after that waits for this row's lock in `wakeParentHeld` and then finds it `waiting`.
 * Reading the children before taking the lock (as this once did) let a child's end commit in
 * between, see the parent still `running` and wake nothing (found by the crash campaign).
 */
export async function writeHeldExecution(
  trx: Transaction<Database>,
  lease: LeaseChecks,
  executionId: string,
  changes: Partial<ExecutionRow>,
  awaited: readonly string[],
): Promise<void> {
  if (changes.status === 'waiting' && changes.run_at === null && awaited.length > 0) {
    if (!(await lease.holds(trx, executionId))) throw new LeaseLostError(executionId);
    if ((await listEndedChildren(trx, [...awaited])).length > 0) changes.run_at = changes.updated_at!;
  }
  const held = Object.keys(changes).length > 0 ? await lease.updateHeld(trx, executionId, changes) : await lease.holds(trx, executionId);
  if (!held) throw new LeaseLostError(executionId);
}

/**
 * A child's end makes its waiting parent due, in the child's final commit. The parent's row is
 * locked first, so a parent committing its wait at this moment (in another worker) finishes
 * first and this statement then reads its `waiting` status and its step rows; the parent's own
 * run is never changed here while another worker holds it (`running` under a lease): that worker
 * reads the child's end itself when it commits its wait (`writeHeldExecution`).
 */
export async function wakeParentHeld(trx: Transaction<Database>, parentId: string, childId: string, nowIso: string): Promise<void> {
  await lockExecutions(trx, [parentId]);
  await wakeParent(trx, parentId, childId, nowIso);
}
