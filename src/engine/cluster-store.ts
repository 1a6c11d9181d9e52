import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ExecutionRow } from './execution-store.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The SQL of claims and leases (PostgreSQL only; see cluster.ts). Lease times come from the
 * database's clock, not the processes': workers on several hosts must agree on when a lease
 * expires, whatever their clocks' skew. Due times (`run_at`) stay on the engine's clock, as on
 * SQLite, so tests with a manual clock drive waits the same way on both dialects.
 */

/** The database's current time as a canonical timestamp (`YYYY-MM-DDTHH:MM:SS.ffffffZ`). */
const DB_NOW = sql<string>`to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

function dbNowPlus(ms: number): RawBuilder<string> {
  return sql<string>`to_char((clock_timestamp() + make_interval(secs => ${ms / 1000})) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * Claims are serialized across the cluster by this transaction-scoped advisory lock, so the
 * counts they enforce (the cluster-wide running limit, per-workflow limits) cannot be overbooked
 * by two workers claiming at once. A claim holds it for one short transaction (a few statements
 * on indexed rows), and takes many executions at once under load.
 */
const CLAIM_LOCK = 0x5357_0001;

export interface ClaimRequest {
  owner: string;
  /** The engine's clock: what is due. */
  nowIso: string;
  /** At most this many (the worker's free slots). */
  capacity: number;
  /** Live running executions allowed in the whole cluster. */
  maxRunning: number;
  leaseMs: number;
  /** Claim only this execution (a parked run resuming, a woken parent); else any due ones. */
  onlyId?: string;
}

export interface Claimed {
  row: ExecutionRow;
  /** It was running under another worker's lease, which expired (a crash): a takeover. */
  takeover: boolean;
  /** Its status before the claim (`pending`: its first run starts now). */
  was: string;
  /** When it became due (`run_at` before the claim), for the claim latency; null for a takeover. */
  dueAt: string | null;
}

/**
 * Claims runnable executions: pending or waiting ones that are due, and running ones whose lease
 * expired, oldest first, within the cluster's running limit and each workflow's own limit; they
 * become `running` under this worker's lease. `onlyId` also accepts that execution when this
 * worker already holds it (a run waiting only for children keeps `running` for a moment).
 */
export interface ClaimResult {
  claimed: Claimed[];
  /**
   * Runnable executions were left for a limit (the cluster's, a workflow's) rather than for want
   * of any: a run that ends may let them in, so the next claim must look again.
   */
  heldBack: boolean;
}

export async function claimExecutions(db: Kysely<Database>, request: ClaimRequest): Promise<ClaimResult> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(trx);
    const live = await sql<{ workflow_id: string; concurrency_limit: number | null; n: string }>`
      select workflow_id, min(concurrency_limit) as concurrency_limit, count(*) as n
      from executions
      where status = 'running' and lease_expires_at > ${DB_NOW}
      group by workflow_id`.execute(trx);
    const running = new Map<string, { limit: number | null; n: number }>();
    let total = 0;
    for (const row of live.rows) {
      running.set(row.workflow_id, { limit: row.concurrency_limit, n: Number(row.n) });
      total += Number(row.n);
    }
    const room = Math.min(request.capacity, request.maxRunning - total);
    if (room <= 0) return { claimed: [], heldBack: request.maxRunning - total <= 0 };
    const blocked = [...running].filter(([, entry]) => entry.limit !== null && entry.n >= entry.limit).map(([id]) => id);

    const candidates = await findCandidates(trx, request, blocked, room);
    const chosen: { id: string; takeover: boolean; was: string; dueAt: string | null }[] = [];
    let heldBack = blocked.length > 0;
    for (const candidate of candidates) {
      if (chosen.length >= room) break;
      const entry = running.get(candidate.workflow_id);
      if (candidate.concurrency_limit !== null && (entry?.n ?? 0) >= candidate.concurrency_limit && !candidate.mine) {
        heldBack = true;
        continue;
      }
      if (!candidate.mine) {
        if (entry) entry.n += 1;
        else running.set(candidate.workflow_id, { limit: candidate.concurrency_limit, n: 1 });
      }
      chosen.push({ id: candidate.id, takeover: candidate.status === 'running' && !candidate.mine, was: candidate.status, dueAt: candidate.run_at });
    }
    if (request.capacity > request.maxRunning - total) heldBack = true;
    if (chosen.length === 0) return { claimed: [], heldBack };
    const byId = new Map(chosen.map((c) => [c.id, c]));
    const rows = await trx
      .updateTable('executions')
      .set({
        status: 'running',
        lease_owner: request.owner,
        lease_expires_at: dbNowPlus(request.leaseMs),
        run_at: null,
        started_at: sql<string>`coalesce(started_at, ${request.nowIso})`,
        updated_at: request.nowIso,
      })
      .where(
        'id',
        'in',
        chosen.map((c) => c.id),
      )
      .returningAll()
      .execute();
    const claimed = rows.map((row) => {
      const { takeover, was, dueAt } = byId.get(row.id)!;
      return { row, takeover, was, dueAt };
    });
    return { claimed, heldBack };
  });
}

interface Candidate {
  id: string;
  workflow_id: string;
  status: string;
  concurrency_limit: number | null;
  run_at: string | null;
  /** Already running under this worker's lease (`onlyId` only). */
  mine: boolean;
}

async function findCandidates(trx: Transaction<Database>, request: ClaimRequest, blocked: string[], room: number): Promise<Candidate[]> {
  const scan = Math.max(room * 2, 16);
  const notBlocked = blocked.length > 0 ? sql`and workflow_id not in (${sql.join(blocked)})` : sql``;
  const onlyThis = request.onlyId !== undefined ? sql`and id = ${request.onlyId}` : sql``;
  // Due pending and waiting executions, oldest first (the partial index on run_at serves it).
  const due = await sql<Candidate>`
    select id, workflow_id, status, concurrency_limit, run_at, false as mine from executions
    where status in ('pending', 'waiting') and run_at <= ${request.nowIso} ${notBlocked} ${onlyThis}
    order by run_at, id limit ${scan} for update skip locked`.execute(trx);
  // Running executions whose worker stopped renewing its lease (it crashed, or lost the database).
  const expired = await sql<Candidate>`
    select id, workflow_id, status, concurrency_limit, run_at, false as mine from executions
    where status = 'running' and (lease_expires_at is null or lease_expires_at <= ${DB_NOW})
      and (lease_owner is null or lease_owner <> ${request.owner}) ${notBlocked} ${onlyThis}
    order by lease_expires_at nulls first, id limit ${scan} for update skip locked`.execute(trx);
  const candidates = [...expired.rows, ...due.rows];
  if (request.onlyId !== undefined && candidates.length === 0) {
    const held = await sql<Candidate>`
      select id, workflow_id, status, concurrency_limit, run_at, true as mine from executions
      where id = ${request.onlyId} and status = 'running' and lease_owner = ${request.owner}
      for update skip locked`.execute(trx);
    candidates.push(...held.rows);
  }
  return candidates;
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
  const rows = await db.selectFrom('executions').select('id').where('lease_owner', '=', owner).where(sql<boolean>`status = 'running'`).execute();
  return new Set(rows.map((row) => row.id));
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
export async function updateHeldExecution(db: Db, executionId: string, owner: string, leaseMs: number, changes: Partial<ExecutionRow>): Promise<boolean> {
  const renewal = 'lease_owner' in changes ? {} : { lease_expires_at: dbNowPlus(leaseMs) };
  const result = await db
    .updateTable('executions')
    .set(Object.assign({}, changes, renewal))
    .where('id', '=', executionId)
    .where('lease_owner', '=', owner)
    .where('status', 'in', ['pending', 'running', 'waiting'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
