import type { DatabaseHandle } from './dialect/dialect.js';
import { TableNotices } from './table-notices.js';

/**
 * A stamp for a set of tables: a string that changes whenever one of them is written, by this
 * process or any other. A cache entry stored under a stamp is served only while the stamp is
 * unchanged. Null means "do not cache now". PostgreSQL answers through a promise (it first makes
 * sure every change notice committed before the call has arrived); SQLite answers at once.
 *
 * The stamp must be taken before the read it guards: a write that lands between the two then
 * changes the stamp after the entry was stored under the old one, so the entry is never served.
 */
export interface DataStamp {
  (tables: readonly string[]): string | null | Promise<string | null>;
  /**
   * PostgreSQL only: the stamp from the change notices heard so far, at once, without making
   * sure that every notice committed before the call has arrived (the round trip the stamp
   * itself makes). An entry served under it may be stale: only for callers whose writes check
   * the rows they were decided on (migration 0021), and that take a fresh look before refusing.
   */
  heard?: (tables: readonly string[]) => string | null;
}

/**
 * SQLite: this process's writes (TableWrites) and SQLite's `data_version`, which changes when any
 * other connection commits. PostgreSQL: this process's writes and the tables' versions heard
 * through LISTEN/NOTIFY (TableNotices); null for any set of tables the database does not announce.
 * Null where neither exists.
 */
export async function startDataStamp(handle: DatabaseHandle): Promise<DataStamp | null> {
  const external = handle.externalChanges;
  if (external) return (tables) => `${handle.writes.version(tables)}:${external()}`;
  if (!handle.notifier) return null;
  const notices = await TableNotices.start(handle.db, handle.notifier);
  const stamp: DataStamp = (tables) => {
    if (!notices.covers(tables)) return null;
    // This process's own writes count at once, before their commit is announced.
    const own = handle.writes.version(tables);
    return notices.version(tables).then((heard) => (heard === null ? null : `${own}:${heard}`));
  };
  stamp.heard = (tables) => (notices.covers(tables) ? `${handle.writes.version(tables)}:${notices.heardVersion(tables)}` : null);
  return stamp;
}
