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

  /**
   * A `text[]` of `values` as one text parameter, split in the statement: each value after a
   * U+0001, `(string_to_array($n, chr(1)))[2:]`. pg sends a `text[]` parameter in PostgreSQL's
   * array syntax, quoting each element and escaping its every `"` and `\\` with two regular
   * expression passes; for JSON texts (the hand-off's entries, answers) that was about a third of
   * everything an API process allocated under the respond load, and the server parsed the escapes
   * back (`array_in`). JSON never holds a raw U+0001 (JSON.stringify escapes control characters);
   * a list where any value holds one is sent as an array, as before.
   */
  textList(values: readonly string[]): string {
    let joined = '';
    for (const value of values) {
      if (value.includes(LIST_SEPARATOR)) return this.param(values, 'text[]');
      joined += LIST_SEPARATOR + value;
    }
    return `(string_to_array(${this.param(joined)}, chr(1)))[2:]`;
  }

  compile(text: string): CompiledQuery {
    return CompiledQuery.raw(text, this.values);
  }
}

const LIST_SEPARATOR = '\u0001';

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
      if (typeof value === 'object' && value !== null && 'toOperationNode' in value)
        throw new Error(`insertRows takes plain values: ${table}.${column} is an SQL expression`);
      return statement.param(value);
    });
    return `(${values.join(', ')})`;
  });
  return `insert into ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) values ${tuples.join(', ')}`;
}
