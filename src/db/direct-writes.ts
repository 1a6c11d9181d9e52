import type { Kysely } from 'kysely';
import { TableWrites, type DirectWrites } from './table-writes.js';

export type { DirectWrites } from './table-writes.js';

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
