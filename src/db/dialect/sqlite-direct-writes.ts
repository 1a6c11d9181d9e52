import type SQLite from 'better-sqlite3';
import type { DirectWrites } from '../direct-writes.js';
import type { TableWrites } from '../table-writes.js';

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** better-sqlite3 binds no booleans (see SqliteBooleanPlugin). */
const bindable = (value: unknown) => (typeof value === 'boolean' ? (value ? 1 : 0) : value);

/**
 * DirectWrites on SQLite: one prepared statement per table and column list, kept for the
 * process (the engine writes a handful of shapes). Each write is counted in TableWrites like a
 * write through the query builder, so in-process caches stay fresh.
 */
export function sqliteDirectWrites(connection: SQLite.Database, writes: TableWrites): DirectWrites {
  const statements = new Map<string, SQLite.Statement>();
  const statement = (key: string, build: () => string) => {
    let found = statements.get(key);
    if (found === undefined) {
      found = connection.prepare(build());
      statements.set(key, found);
    }
    return found;
  };
  return {
    insert(table, row) {
      const columns: string[] = [];
      const values: unknown[] = [];
      for (const [column, value] of Object.entries(row)) {
        if (value === undefined) continue;
        columns.push(column);
        values.push(bindable(value));
      }
      const sql = () => `insert into ${quote(table)} (${columns.map(quote).join(', ')}) values (${columns.map(() => '?').join(', ')})`;
      statement(`i ${table} ${columns.join(',')}`, sql).run(values);
      writes.count(table);
    },
    update(table, changes, id, statusIn) {
      const columns: string[] = [];
      const values: unknown[] = [];
      for (const [column, value] of Object.entries(changes)) {
        if (value === undefined) continue;
        columns.push(column);
        values.push(bindable(value));
      }
      values.push(id);
      if (statusIn) values.push(...statusIn);
      const sql = () =>
        `update ${quote(table)} set ${columns.map((c) => `${quote(c)} = ?`).join(', ')} where "id" = ?${statusIn ? ` and "status" in (${statusIn.map(() => '?').join(', ')})` : ''}`;
      const result = statement(`u ${table} ${columns.join(',')} ${statusIn?.length ?? -1}`, sql).run(values);
      writes.count(table);
      return result.changes;
    },
  };
}
