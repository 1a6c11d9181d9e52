import { sql, type CompiledQuery, type Kysely } from 'kysely';
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

/**
 * The due condition of each table as a literal, matching its partial index (migration 0008):
 * bound as a parameter (`status = ?`), SQLite cannot tell that the query implies the index's
 * condition and scanned the whole table on every pass of the background loop: ~1.2 ms at
 * 10,000 documents, paid on every poke (each ingested document pokes), against ~0.02 ms on the
 * index.
 */
const DUE = {
  pending: { column: 'status', value: () => sql.lit('pending'), order: ['next_attempt_at', 'id'] },
  reembedding: { column: 'embedder_status', value: () => sql.lit('reembedding'), order: ['id'] },
  compaction: { column: 'compaction_due', value: (dialect: DialectName) => sql.lit(dialect === 'postgres' ? true : 1), order: ['id'] },
} as const;

/** A claim, unexecuted (tests read its plan). */
export function claimQuery(db: LooseDb, table: LeasedTable, due: keyof typeof DUE, options: ClaimOptions) {
  const condition = DUE[due];
  let candidates = db
    .selectFrom(table)
    .select('id')
    .where(condition.column, '=', condition.value(options.dialect))
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', options.now)]))
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', options.now)]));
  // In the order of the partial index, so the planner walks it instead of sorting or scanning
  // the table in id order; which due rows a pass takes first does not matter.
  for (const column of condition.order) candidates = candidates.orderBy(column);
  candidates = candidates.limit(options.limit);
  if (options.dialect === 'postgres') candidates = candidates.forUpdate().skipLocked();
  return db
    .updateTable(table)
    .set({ lease_owner: options.owner, lease_expires_at: options.leaseUntil })
    .where('id', 'in', candidates)
    .returningAll();
}

/** Stand-ins compiled into a claim's query in place of its values, found again in its parameters. */
const SLOTS = { owner: '\u0000owner', leaseUntil: '\u0000lease', now: '\u0000now' } as const;

/**
 * Claims compiled once per database, table and condition: building the claim through the query
 * builder cost ~0.25 ms a call (more than running it), and the embedding loop claims after every
 * ingested document.
 */
const compiled = new WeakMap<object, Map<string, { query: CompiledQuery; slots: (keyof ClaimOptions | null)[] }>>();

export async function claimDue<T extends LeasedTable>(
  db: Kysely<Database>,
  table: T,
  due: 'pending' | 'reembedding' | 'compaction',
  options: ClaimOptions,
): Promise<Database[T][]> {
  const dbAny = db as unknown as LooseDb;
  let forDb = compiled.get(db);
  if (forDb === undefined) compiled.set(db, (forDb = new Map()));
  const key = `${table} ${due} ${options.dialect} ${options.limit}`;
  let entry = forDb.get(key);
  if (entry === undefined) {
    const query = claimQuery(dbAny, table, due, { ...options, ...SLOTS }).compile();
    const slots = query.parameters.map(
      (value) => (Object.entries(SLOTS).find(([, slot]) => slot === value)?.[0] as keyof ClaimOptions | undefined) ?? null,
    );
    entry = { query, slots };
    forDb.set(key, entry);
  }
  const { query, slots } = entry;
  const parameters = slots.map((slot, i) => (slot === null ? query.parameters[i] : options[slot]));
  const result = await dbAny.executeQuery({ query: query.query, queryId: query.queryId, sql: query.sql, parameters });
  return result.rows as unknown as Database[T][];
}

/** Extends this process's lease on one row; false when it was lost (expired and taken). */
export async function renewLease(
  db: Kysely<Database>,
  table: LeasedTable,
  id: string,
  owner: string,
  leaseUntil: string,
): Promise<boolean> {
  const dbAny = db as unknown as LooseDb;
  const result = await dbAny
    .updateTable(table)
    .set({ lease_expires_at: leaseUntil })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives up every lease this process holds on a table (clean shutdown). */
export async function releaseLeases(db: Kysely<Database>, table: LeasedTable, owner: string): Promise<void> {
  const dbAny = db as unknown as LooseDb;
  await dbAny.updateTable(table).set({ lease_owner: null, lease_expires_at: null }).where('lease_owner', '=', owner).execute();
}
