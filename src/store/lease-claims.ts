import type { Kysely } from 'kysely';
import type { DialectName } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';

/**
 * Claims of background work across workspaces (the rows carry their workspace; the work that
 * follows goes through workspace-scoped repositories). A row is due when its retry time has
 * come and no live lease holds it; claiming writes this process as owner until `leaseUntil`.
 * On PostgreSQL the candidates are locked with `FOR UPDATE SKIP LOCKED`, so processes sharing
 * the database never claim the same row; SQLite has one writer, so the statement is atomic.
 */
export type LeasedTable = 'knowledge_documents' | 'knowledge_bases' | 'memory_sessions';

export interface ClaimOptions {
  dialect: DialectName;
  owner: string;
  now: string;
  leaseUntil: string;
  limit: number;
}

/** The leased tables share their lease columns; one loosely typed builder serves all three. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LooseDb = Kysely<any>;

export async function claimDue<T extends LeasedTable>(db: Kysely<Database>, table: T, due: 'pending' | 'reembedding' | 'compaction', options: ClaimOptions): Promise<Database[T][]> {
  const dbAny = db as unknown as LooseDb;
  let candidates = dbAny.selectFrom(table as string).select('id');
  if (due === 'pending') candidates = candidates.where('status', '=', 'pending');
  else if (due === 'reembedding') candidates = candidates.where('embedder_status', '=', 'reembedding');
  else candidates = candidates.where('compaction_due', '=', options.dialect === 'postgres' ? true : 1);
  candidates = candidates
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', options.now)]))
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', options.now)]))
    .orderBy('id')
    .limit(options.limit);
  if (options.dialect === 'postgres') candidates = candidates.forUpdate().skipLocked();
  const rows = await dbAny
    .updateTable(table as string)
    .set({ lease_owner: options.owner, lease_expires_at: options.leaseUntil })
    .where('id', 'in', candidates)
    .returningAll()
    .execute();
  return rows as unknown as Database[T][];
}

/** Extends this process's lease on one row; false when it was lost (expired and taken). */
export async function renewLease(db: Kysely<Database>, table: LeasedTable, id: string, owner: string, leaseUntil: string): Promise<boolean> {
  const dbAny = db as unknown as LooseDb;
  const result = await dbAny.updateTable(table).set({ lease_expires_at: leaseUntil }).where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives up every lease this process holds on a table (clean shutdown). */
export async function releaseLeases(db: Kysely<Database>, table: LeasedTable, owner: string): Promise<void> {
  const dbAny = db as unknown as LooseDb;
  await dbAny.updateTable(table).set({ lease_owner: null, lease_expires_at: null }).where('lease_owner', '=', owner).execute();
}
