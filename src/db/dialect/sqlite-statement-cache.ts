import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** A value as better-sqlite3 can bind it: booleans as 0/1 (SQLite stores them so anyway). */
export const encode = (value: unknown) => (typeof value === 'boolean' ? (value ? 1 : 0) : value);

/** The parameters with booleans as 0/1; the same array when it holds none (the common case). */
export function bindable(parameters: ReadonlyArray<unknown>): ReadonlyArray<unknown> {
  for (let i = 0; i < parameters.length; i++) if (typeof parameters[i] === 'boolean') return parameters.map(encode);
  return parameters;
}

/** A prepared statement as Kysely's driver runs it, binding booleans as 0/1. */
function encodingStatement(statement: SQLite.Statement): SqliteStatement {
  return {
    reader: statement.reader,
    all: (parameters) => statement.all(bindable(parameters)),
    run: (parameters) => statement.run(bindable(parameters)),
    iterate: (parameters) => statement.iterate(bindable(parameters)),
  };
}

/**
 * Kysely's SQLite driver prepares every query afresh; preparing costs ~45 µs here, three times
 * what running a small indexed query costs (measured for `GET /me`, see bench/results). This
 * wrapper keeps prepared statements by SQL text, least recently used first out. The driver runs
 * one query at a time, so sharing a statement is safe.
 *
 * better-sqlite3 binds no booleans: they are encoded here, per parameter, so repositories and
 * services write `true` on both dialects (reads go through `Boolean(value)` where an attribute is
 * a boolean). This replaced a Kysely plugin that rebuilt every query's whole operation tree to
 * find boolean values: ~6% of the CPU of a store row PUT (bench:stores profile) for queries that
 * almost never carry one.
 */
export function cachingDatabase(connection: SQLite.Database, capacity = 500): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
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
        statement = encodingStatement(connection.prepare(sqlText));
        if (statements.size >= capacity) statements.delete(statements.keys().next().value!);
      }
      statements.set(sqlText, statement);
      return statement;
    },
  };
}
