import type { DatabaseHandle } from './dialect/dialect.js';

/**
 * Where the database can tell cheaply whether another connection committed (SQLite), a stamp
 * function for tables: it changes when this process writes one of them or any other process
 * commits anything. Where it cannot (PostgreSQL, several processes), null: callers do not cache.
 *
 * The stamp must be taken before the read it guards. On SQLite one connection serves the
 * process and a transaction holds it to its end, so a read that starts after a write's stamp
 * change also runs after that write commits.
 */
export type DataStamp = (tables: readonly string[]) => string;

export function dataStampOf(handle: DatabaseHandle): DataStamp | null {
  const external = handle.externalChanges;
  if (!external) return null;
  return (tables) => `${handle.writes.version(tables)}:${external()}`;
}
