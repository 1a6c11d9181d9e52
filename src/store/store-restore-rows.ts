import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { DialectName } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';
import { countWrite } from '../db/table-writes.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The row statements of a restore's batches (services/stores/dump/restore-batch.ts): SQL text made
 * once per dialect and row count, the values passed as one flat parameter list.
 *
 * Not through the query builder, for the garbage it leaves: it makes objects for every value
 * (the row objects, a node per value, the compiled copy), which are alive whenever a
 * young-generation collection falls inside a statement. With the batch itself already outside
 * the heap (pending-rows.ts), 2 of 10 restores of 1,000,000 rows through the builder still
 * grew the server's RSS by 168 and 186 MB (the others by 46 to 55): their old generation took
 * ~1.1 MB per young collection instead of ~0.1, as if V8 had started allocating some of those
 * objects straight in the old generation (allocation-site pretenuring; 5 of 5 such restores
 * stayed at 48 to 57 MB with --no-allocation-site-pretenuring, a flag used only to find this).
 * With these statements, 10 of 10 grew it by 25 to 45 MB, the old generation by 5 to 24 MB.
 */
const statements = new Map<string, CompiledQuery>();
/** Statements kept, least recently used first out: the full-size ones, and a few odd sizes (a batch's last statement). */
const MAX_STATEMENTS = 16;

function statement(dialect: DialectName, kind: 'insert' | 'held', count: number): CompiledQuery {
  const name = `${dialect} ${kind} ${count}`;
  let compiled = statements.get(name);
  if (compiled === undefined) {
    let n = 0;
    const slot = () => (dialect === 'postgres' ? `$${++n}` : '?');
    const text =
      kind === 'insert'
        ? `insert into store_rows (store_id, key, row, created_at, updated_at) values ${Array.from({ length: count }, () => `(${slot()}, ${slot()}, ${slot()}, ${slot()}, ${slot()})`).join(', ')}`
        : `select key from store_rows where store_id = ${slot()} and key in (${Array.from({ length: count }, slot).join(', ')})`;
    compiled = CompiledQuery.raw(text);
    if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value!);
  } else {
    statements.delete(name);
  }
  statements.set(name, compiled);
  return compiled;
}

/** Which of `keys` (at most a few hundred) the store holds. */
export async function heldRowKeys(db: Db, dialect: DialectName, storeId: string, keys: readonly string[]): Promise<Set<string>> {
  const held = new Set<string>();
  if (keys.length === 0) return held;
  const { query, queryId, sql } = statement(dialect, 'held', keys.length);
  const result = await db.executeQuery<{ key: string }>({ query, queryId, sql, parameters: [storeId, ...keys] });
  for (const row of result.rows) held.add(row.key);
  return held;
}

/**
 * Inserts `count` rows (at most a few hundred) given as one flat list, five values a row:
 * store_id, key, row (JSON text), created_at, updated_at. The workflow and execution are null.
 */
export async function insertRestoredRows(db: Db, dialect: DialectName, values: readonly string[], count: number): Promise<void> {
  if (count === 0) return;
  const { query, queryId, sql } = statement(dialect, 'insert', count);
  await db.executeQuery({ query, queryId, sql, parameters: values });
  // Raw statements pass by the plugin that counts writes for the in-process caches.
  countWrite(db, 'store_rows');
}
