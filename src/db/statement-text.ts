import { CompiledQuery } from 'kysely';

/**
 * SQL text with numbered parameters, written by hand, for the one statement a group commit on
 * PostgreSQL sends (transaction-buffer.ts `flushAlone`) and the gathered writes inside it.
 * Kysely makes a node for every value of a multi-row insert and every fragment of a `sql`
 * template, then visits and freezes them all to compile the text: in the cluster benchmark's
 * profiles that was about a sixth of a worker's main-thread CPU time (~80 µs a delivery), for
 * statements whose shape is fixed. Placeholders are numbered in the order values are added and
 * may appear in the text in any order, so parts can be written separately and joined after.
 */
export class StatementText {
  private readonly values: unknown[] = [];

  /** A placeholder for `value` (passed to the driver as Kysely would pass it), cast when `cast` is given. */
  param(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast === undefined ? `$${this.values.length}` : `$${this.values.length}::${cast}`;
  }

  compile(text: string): CompiledQuery {
    return CompiledQuery.raw(text, this.values);
  }
}

/** An identifier quoted as PostgreSQL reads it (the names here are the schema's own). */
export function quoteIdent(name: string): string {
  let quoted = quotedNames.get(name);
  if (quoted === undefined) {
    quoted = `"${name.replaceAll('"', '""')}"`;
    // The schema's names are few; anything else is quoted each time rather than kept.
    if (quotedNames.size < 1024) quotedNames.set(name, quoted);
  }
  return quoted;
}

const quotedNames = new Map<string, string>();

/**
 * `insert into <table> (<columns>) values (...), ...` for rows of one table, as Kysely writes a
 * multi-row insert: the columns are every key with a defined value in any row, in order of first
 * appearance, and a row without one of them gets `default` there.
 */
export function insertRows(statement: StatementText, table: string, rows: readonly Record<string, unknown>[]): string {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const key in row) {
      if (row[key] === undefined || seen.has(key)) continue;
      seen.add(key);
      columns.push(key);
    }
  }
  const tuples = rows.map((row) => {
    const values = columns.map((column) => {
      const value = row[column];
      if (value === undefined) return 'default';
      if (typeof value === 'object' && value !== null && 'toOperationNode' in value) throw new Error(`insertRows takes plain values: ${table}.${column} is an SQL expression`);
      return statement.param(value);
    });
    return `(${values.join(', ')})`;
  });
  return `insert into ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) values ${tuples.join(', ')}`;
}
