import type { Kysely } from 'kysely';
import { TableWrites } from './table-writes.js';

/**
 * Row writes by plain statement, for the engine's hottest writes (a step row, an execution's
 * row). Where a dialect offers it (SQLite: better-sqlite3 statements run synchronously on the
 * connection the transaction holds), these skip Kysely's query building, compiling and plugins,
 * which cost ~40 µs a statement: about a tenth of the main thread's time per webhook delivery
 * in the webhook benchmark's profile. Elsewhere (PostgreSQL) callers use the query builder.
 */
export interface DirectWrites {
  /** Inserts one row; keys whose value is undefined are left out, as Kysely does. */
  insert(table: string, row: object): void;
  /** Updates the row with this id (and, given, one of these statuses); returns the rows changed. */
  update(table: string, changes: object, id: string, statusIn?: readonly string[]): number;
}

/**
 * The direct writer of a transaction, or null (PostgreSQL, or not a transaction). Only inside a
 * transaction: the transaction holds the one SQLite connection, so a statement run on it
 * directly belongs to that transaction and can interleave with no other query.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema: only the executor is used
export function directWrites(db: Kysely<any>): DirectWrites | null {
  if (!db.isTransaction) return null;
  for (const plugin of db.getExecutor().plugins) if (plugin instanceof TableWrites) return plugin.direct;
  return null;
}
