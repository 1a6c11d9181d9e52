import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * Kysely's SQLite driver prepares every query afresh; preparing costs ~45 µs here, three times
 * what running a small indexed query costs (measured for `GET /me`, see bench/results). This
 * wrapper keeps prepared statements by SQL text, least recently used first out. The driver runs
 * one query at a time, so sharing a statement is safe.
 */
export function cachingDatabase(connection: SQLite.Database, capacity = 500): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => {
      statements.clear();
      connection.close();
    },
    prepare(sqlText: string): SqliteStatement {
      let statement = statements.get(sqlText);
      if (statement) {
        statements.delete(sqlText);
      } else {
        statement = connection.prepare(sqlText);
        if (statements.size >= capacity) statements.delete(statements.keys().next().value!);
      }
      statements.set(sqlText, statement);
      return statement as unknown as SqliteStatement;
    },
  };
}
