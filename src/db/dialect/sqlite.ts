import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { Database } from '../schema.js';
import type { DatabaseHandle, SqlDialect } from './dialect.js';
import { TableWrites } from '../table-writes.js';
import { cachingDatabase } from './sqlite-statement-cache.js';
import { sqliteDirectWrites } from './sqlite-direct-writes.js';
import { SAFETY_NET_PAGES, startCheckpointer } from './sqlite-checkpointer.js';
import { EXTERNAL_PROBE_INTERVAL_MS, throttledProbe } from './throttled-probe.js';

export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  textType: 'text',
  booleanType: 'integer',
  doubleType: 'real',
  bool: (value) => (value ? 1 : 0),
  distinctFrom: (left, right, negate) => (negate ? sql<boolean>`${left} IS ${right}` : sql<boolean>`${left} IS NOT ${right}`),
  lower: (expression) => sql<string>`sy_lower(${expression})`,
  jsonMember: (column, name) => sql`json_extract(${column}, ${jsonMemberPath(name)})`,
  rowLocks: false,
  isUniqueViolation: (error) => {
    const code = (error as { code?: unknown } | null)?.code;
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
};

/**
 * A JSON path naming one top-level member. The label is quoted and JSON-escaped: SQLite's path
 * parser takes `\"` and `\\` inside a quoted label, so any member name works, dots and spaces
 * included. json_extract already answers SQL values (text, integer, real, 1/0 for booleans).
 */
export function jsonMemberPath(name: string): string {
  return `$."${JSON.stringify(name).slice(1, -1)}"`;
}

/**
 * Opens the embedded database. WAL lets readers proceed during a write; `synchronous=NORMAL`
 * in WAL mode is durable across process crashes (only an OS crash can lose the last commits),
 * which is the usual trade for an embedded service. `case_sensitive_like` makes LIKE behave as
 * on PostgreSQL; `sy_lower` lower-cases with JavaScript's full Unicode mapping because SQLite's
 * lower() only folds ASCII. A file database's WAL is checkpointed by a thread of its own.
 */
export function openSqlite(file: string): DatabaseHandle {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const connection = new SQLite(file);
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  connection.pragma('case_sensitive_like = ON');
  // Reads through a memory map instead of the pager's copies: sqlite-vec scans every vector of a
  // knowledge base per search, and at 100,000 vectors (100 MB) the map cut a scan from 72 to 27 ms
  // on the 2-core VM of bench/results. Address space only; the OS page cache holds the pages.
  if (file !== ':memory:') connection.pragma('mmap_size = 1073741824');
  // Checkpoints happen on a thread of their own (sqlite-checkpointer.ts); this is the safety net.
  const checkpointer = file === ':memory:' ? null : startCheckpointer(file);
  if (checkpointer) connection.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
  // Vector search (knowledge bases): the extension ships prebuilt inside the npm package.
  sqliteVec.load(connection);
  connection.function('sy_lower', { deterministic: true }, (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value));
  const writes = new TableWrites();
  writes.direct = sqliteDirectWrites(connection, writes);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingDatabase(connection) }), plugins: [writes] });
  const dataVersion = connection.prepare('PRAGMA data_version').pluck();
  return {
    db,
    dialect: sqliteDialect,
    // No other connection can open an in-memory database.
    externalChanges: file === ':memory:' ? () => 0 : throttledProbe(() => dataVersion.get() as number, EXTERNAL_PROBE_INTERVAL_MS),
    writes,
    notifier: null,
    file: file === ':memory:' ? null : file,
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}
