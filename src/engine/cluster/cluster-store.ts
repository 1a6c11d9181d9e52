import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { countWrite } from '../../db/table-writes.js';
import { flushBuffered, transactionBuffer } from '../../db/transaction-buffer.js';
import { gatherable, HeldUpdates, leaseExpiry } from './held-updates.js';
import type { ExecutionRow, StepRow } from '../execution-store.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The SQL of claims and leases (PostgreSQL only; see cluster.ts). Lease times come from the
 * database's clock, not the processes': workers on several hosts must agree on when a lease
 * expires, whatever their clocks' skew. Due times (`run_at`) stay on the engine's clock, as on
 * SQLite, so tests with a manual clock drive waits the same way on both dialects.
 */

function dbNowPlus(ms: number): RawBuilder<string> {
  // A number from the settings, written as a literal (Number() keeps it one).
  return sql<string>`${sql.raw(leaseExpiry(String(Number(ms) / 1000)))}`;
}

export interface ClaimRequest {
  owner: string;
  /** The engine's clock: what is due. */
  nowIso: string;
  /** At most this many (the worker's free slots). */
  capacity: number;
  /** Live running executions allowed in the whole cluster. */
  maxRunning: number;
  leaseMs: number;
}

export interface Claimed {
  row: ExecutionRow;
  /** It was running under another worker's lease, which expired (a crash): a takeover. */
  takeover: boolean;
  /** Its status before the claim (`pending`: its first run starts now). */
  was: string;
  /** When it became due (`run_at` before the claim), for the claim latency; null for a takeover. */
  dueAt: string | null;
  /** Its step rows, read in the claim when it was `pending` (a new execution); else null: the worker reads them. */
  steps: StepRow[] | null;
}

export interface ClaimResult {
  claimed: Claimed[];
  /**
   * Runnable executions were left for a limit (the cluster's, a workflow's) rather than for want
   * of any: a run that ends may let them in, so the next claim must look again.
   */
  heldBack: boolean;
}

/**
 * Claims runnable executions: running ones whose lease expired (their worker crashed or lost the
 * database) first, then pending or waiting ones that are due, oldest first, within the cluster's
 * running limit and each workflow's own limit; they become `running` under this worker's lease.
 *
 * Claims are serialized across the cluster by a transaction-scoped advisory lock, so the counts
 * they enforce cannot be overbooked by two workers claiming at once; candidates are read `for
 * update skip locked`. The whole claim is one call of the function `sy_claim_executions`
 * (migration 0017, where its SQL is): one round trip, where the same steps as separate
 * statements were seven, on the way from every delivery's commit to its first step.
 */
export async function claimExecutions(db: Kysely<Database>, request: ClaimRequest): Promise<ClaimResult> {
  const result = await sql<{ claim: ClaimAnswer }>`
    select sy_claim_executions(${request.owner}, ${request.nowIso}, ${request.capacity}, ${request.maxRunning}, ${request.leaseMs}) as claim`.execute(
    db,
  );
  const answer = result.rows[0]!.claim;
  if (answer.claimed.length > 0) countWrite(db, 'executions');
  return {
    heldBack: answer.held_back,
    claimed: answer.claimed.map((entry) => ({
      row: entry.row,
      takeover: entry.takeover,
      was: entry.was,
      dueAt: entry.due_at,
      steps: entry.steps,
    })),
  };
}

/** What `sy_claim_executions` answers (jsonb, parsed by pg). */
interface ClaimAnswer {
  held_back: boolean;
  claimed: { row: ExecutionRow; takeover: boolean; was: string; due_at: string | null; steps: StepRow[] | null }[];
}

/**
 * Renews this worker's leases; answers the ids it still holds (a lease it lost is not among them).
 *
 * A row locked by another transaction is skipped, not waited for: it is this worker's own group
 * commit (which renews the lease itself, in `updateHeldExecution`) or another worker's claim
 * taking over an expired lease. Waiting would block the heartbeat behind our own write batch,
 * and since the batch locks several rows in id order while an `update ... where lease_owner`
 * locks them in scan order, the two could deadlock (PostgreSQL breaks it after its
 * deadlock_timeout, 1 s by default, aborting one side; found by the crash campaign). Which ids
 * are still ours is read without locks, so a skipped row does not count as a lost lease: if a
 * claim took it, the next heartbeat (or the run's next commit) finds out.
 */
export async function renewLeases(db: Db, owner: string, leaseMs: number): Promise<Set<string>> {
  await sql`
    update executions set lease_expires_at = ${dbNowPlus(leaseMs)}
    where id in (
      select id from executions where lease_owner = ${owner} and status = 'running'
      order by id for update skip locked)`.execute(db);
  const rows = await db
    .selectFrom('executions')
    .select('id')
    .where('lease_owner', '=', owner)
    .where(sql<boolean>`status = 'running'`)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** These executions, where this worker holds them (`running` under its lease): those handed to it by id (hand-off.ts). */
export async function heldExecutions(db: Db, owner: string, ids: string[]): Promise<ExecutionRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('executions')
    .selectAll()
    .where('id', 'in', ids)
    .where('lease_owner', '=', owner)
    .where(sql<boolean>`status = 'running'`)
    .execute();
}

/** Milliseconds (database clock) until the earliest lease another worker holds expires; null when none is held. */
export async function nextForeignExpiry(db: Db, owner: string): Promise<number | null> {
  const result = await sql<{ ms: string | null }>`
    select extract(epoch from (min(lease_expires_at)::timestamptz - clock_timestamp())) * 1000 as ms
    from executions where status = 'running' and lease_owner is not null and lease_owner <> ${owner}`.execute(db);
  const ms = result.rows[0]?.ms;
  return ms === null || ms === undefined ? null : Number(ms);
}

/**
 * Locks these executions' rows in id order, first thing in a group commit (write-batcher.ts):
 * every transaction that locks several executions (a batch writing many runs, a child's end
 * waking its parent, a cancellation) takes them in one order, so two workers' batches cannot
 * deadlock on each other's rows. A later statement of the transaction also reads what a
 * transaction that held one of these rows committed (READ COMMITTED takes a snapshot per
 * statement): a parent's wait and its child's end see each other.
 */
export async function lockExecutions(db: Db, ids: Iterable<string>): Promise<void> {
  const sorted = [...new Set(ids)].sort();
  if (sorted.length === 0) return;
  await sql`select id from executions where id in (${sql.join(sorted)}) order by id for update`.execute(db);
}

/**
 * Gives up these running executions at once (a draining worker past its grace): their leases
 * expire now, so another worker claims them on its next pass and runs the steps in flight again.
 */
export async function releaseLeases(db: Db, owner: string, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .updateTable('executions')
    .set({ lease_owner: null, lease_expires_at: null })
    .where('lease_owner', '=', owner)
    .where('id', 'in', ids)
    .where(sql<boolean>`status = 'running'`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Inside a run's commit: the execution is still this worker's (its lease not lost to another
 * after a pause or a partition), renewing the lease while at it. False: the commit must not land.
 */
export async function holdsLease(db: Db, executionId: string, owner: string, leaseMs: number): Promise<boolean> {
  if (await gather(db, executionId, owner, leaseMs, {})) return true;
  await flushBuffered(db, 'executions');
  const result = await db
    .updateTable('executions')
    .set({ lease_expires_at: dbNowPlus(leaseMs) })
    .where('id', '=', executionId)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * A run's changes to its execution, written only while it is live and this worker's; the lease
 * is renewed with them unless they give it up (`lease_owner` among them). False: nothing written.
 */
export async function updateHeldExecution(
  db: Db,
  executionId: string,
  owner: string,
  leaseMs: number,
  changes: Partial<ExecutionRow>,
): Promise<boolean> {
  if (gatherable(changes) && (await gather(db, executionId, owner, leaseMs, changes))) return true;
  const renewal = 'lease_owner' in changes ? {} : { lease_expires_at: dbNowPlus(leaseMs) };
  await flushBuffered(db, 'executions');
  const result = await db
    .updateTable('executions')
    .set(Object.assign({}, changes, renewal))
    .where('id', '=', executionId)
    .where('lease_owner', '=', owner)
    .where('status', 'in', ['pending', 'running', 'waiting'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * In a group commit that buffers its writes (transaction-buffer.ts), the lease check and the
 * changes join the batch's others in one statement at its end (held-updates.ts), which fails the
 * commit with `LeaseLostError` for an execution no longer held: true when gathered so.
 */
async function gather(db: Db, executionId: string, owner: string, leaseMs: number, changes: Partial<ExecutionRow>): Promise<boolean> {
  const buffer = transactionBuffer(db);
  if (!buffer) return false;
  const held = buffer.gatherer(`held-updates:${owner}`, () => new HeldUpdates(owner, leaseMs));
  if (held.add(executionId, changes)) return true;
  await flushBuffered(db, 'executions');
  held.add(executionId, changes);
  return true;
}
