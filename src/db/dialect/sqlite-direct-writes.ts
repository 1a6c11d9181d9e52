import type SQLite from 'better-sqlite3';
import type { DirectWrites } from '../direct-writes.js';
import type { TableWrites } from '../table-writes.js';
import { bindable, encode } from './sqlite-statement-cache.js';

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A prepared statement for one column list (the defined keys of a row, in order). */
interface Shape {
  columns: string[];
  statement: SQLite.Statement;
}

/**
 * Collects the defined keys of `row` in order and pushes their values; returns the shape seen
 * before with those keys, else the keys. The engine writes a handful of shapes per table, so a
 * write finds its statement by comparing keys, with no key string built or looked up.
 */
function bindRow(row: object, shapes: Shape[], values: unknown[]): Shape | string[] {
  const columns: string[] = [];
  for (const column in row) {
    const value = (row as Record<string, unknown>)[column];
    if (value === undefined) continue;
    columns.push(column);
    values.push(encode(value));
  }
  search: for (const shape of shapes) {
    if (shape.columns.length !== columns.length) continue;
    for (let i = 0; i < columns.length; i++) if (shape.columns[i] !== columns[i]) continue search;
    return shape;
  }
  return columns;
}

/**
 * DirectWrites on SQLite: prepared statements per table and column list, kept for the process.
 * Each write is counted in TableWrites like a write through the query builder, so in-process
 * caches stay fresh.
 */
export function sqliteDirectWrites(connection: SQLite.Database, writes: TableWrites): DirectWrites {
  const inserts = new Map<string, Shape[]>();
  const updates = new Map<string, Shape[]>();
  const shapesOf = (map: Map<string, Shape[]>, key: string) => {
    let shapes = map.get(key);
    if (shapes === undefined) map.set(key, (shapes = []));
    return shapes;
  };
  const statements = new Map<string, SQLite.Statement>();
  const statement = (sqlText: string) => {
    let prepared = statements.get(sqlText);
    if (prepared === undefined) statements.set(sqlText, (prepared = connection.prepare(sqlText)));
    return prepared;
  };
  return {
    get(sqlText, parameters) {
      return statement(sqlText).get(bindable(parameters));
    },
    all(sqlText, parameters) {
      return statement(sqlText).all(bindable(parameters));
    },
    run(table, sqlText, parameters) {
      const result = statement(sqlText).run(bindable(parameters));
      writes.count(table);
      return result.changes;
    },
    insert(table, row) {
      const shapes = shapesOf(inserts, table);
      const values: unknown[] = [];
      let shape = bindRow(row, shapes, values);
      if (Array.isArray(shape)) {
        const columns = shape;
        shape = {
          columns,
          statement: connection.prepare(
            `insert into ${quote(table)} (${columns.map(quote).join(', ')}) values (${columns.map(() => '?').join(', ')})`,
          ),
        };
        shapes.push(shape);
      }
      const result = shape.statement.run(values);
      writes.count(table);
      return Number(result.lastInsertRowid);
    },
    update(table, changes, id, statusIn) {
      const shapes = shapesOf(updates, `${table} ${statusIn?.length ?? -1}`);
      const values: unknown[] = [];
      let shape = bindRow(changes, shapes, values);
      if (Array.isArray(shape)) {
        const columns = shape;
        const condition = statusIn ? ` and "status" in (${statusIn.map(() => '?').join(', ')})` : '';
        shape = {
          columns,
          statement: connection.prepare(
            `update ${quote(table)} set ${columns.map((c) => `${quote(c)} = ?`).join(', ')} where "id" = ?${condition}`,
          ),
        };
        shapes.push(shape);
      }
      values.push(id);
      if (statusIn) values.push(...statusIn);
      const result = shape.statement.run(values);
      writes.count(table);
      return result.changes;
    },
  };
}
