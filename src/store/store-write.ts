import type { Transaction } from 'kysely';
import type { SqlDialect } from '../db/dialect/dialect.js';
import type { Database } from '../db/schema.js';
import { AppError, notFound } from '../errors/app-error.js';
import { formatMicros, parseTimestampMicros } from '../lib/clock.js';
import { isUuid } from '../lib/ids.js';
import { isPlainObject } from '../lib/json.js';
import { keyProblem } from './store-keys.js';
import { rowValidator, rowViolations } from './row-schema.js';
import { checkRowText } from './row-text.js';
import { StoreRepository, type StoreRow } from './store-repository.js';
import { StoreRowRepository } from './store-row-repository.js';

export const STORE_WRITE_MODES = ['upsert', 'insert', 'update', 'delete'] as const;
export type StoreWriteMode = (typeof STORE_WRITE_MODES)[number];

export interface StoreRowWrite {
  workspaceId: string;
  storeId: string;
  key: string;
  /** The row object; ignored for `delete`. */
  row?: unknown;
  /** `upsert` (default) inserts or replaces; `insert` fails on an existing key, `update` on a missing one. */
  mode?: StoreWriteMode;
  /** The workflow and execution writing (a save_to_store step); null for API writes. */
  workflowId: string | null;
  executionId: string | null;
  /** The caller's clock reading; the write's time is this or, if needed, just after the store's last write. */
  now: string;
  /** JSON Pointer of the row in the caller's request, prefixed to violation pointers ('/data/row'). */
  rowPointer: string;
}

export interface StoreRowWriteResult {
  key: string;
  /** The row as stored; for a delete, the row removed. */
  row: Record<string, unknown>;
  /** True when the write inserted the key. */
  created: boolean;
  deleted: boolean;
  created_at: string;
  /** The write's time (for a delete, the tombstone's `deleted_at`). */
  updated_at: string;
  workflow_id: string | null;
  execution_id: string | null;
}

/**
 * The one validated write path of store rows: the API's row routes and the save_to_store step
 * both come through here, inside a transaction their caller owns (the API's own, the engine's
 * group commit), so the row and whatever the caller records beside it commit together.
 *
 * Order and why:
 * 1. The store's row is read and (PostgreSQL) locked first, and nothing is read from store_rows
 *    before that: writers of one store then run one at a time, in lock order, which is commit
 *    order. A row read in the same statement as the lock could be stale: READ COMMITTED
 *    re-checks only the locked row when the lock wait ends, not the joined ones.
 * 2. The row is validated against the schema read under the lock, so a schema change (which
 *    takes the same lock) can never commit between a write's validation and its commit.
 * 3. The cap counts `row_count`, kept in the locked row: exact under any number of writers,
 *    and only an insert can exceed it, never a replace.
 * 4. The write's time is max(now, last write + 1 µs), kept in the locked row as well: within a
 *    store, times strictly increase in commit order. The change cursor relies on it: a row that
 *    commits later can never sort before a cursor already handed out (docs/stores.md).
 *
 * Every refusal (an AppError) comes before the first statement that writes, so a refused write
 * leaves its transaction as it found it: the API's group commit on SQLite
 * (services/stores/row-write-batch.ts) relies on it to commit the rest of a batch.
 */
export async function writeStoreRow(trx: Transaction<Database>, dialect: SqlDialect, write: StoreRowWrite): Promise<StoreRowWriteResult> {
  const mode = write.mode ?? 'upsert';
  const problem = keyProblem(write.key);
  if (problem !== null) throw new AppError('invalid_key', problem, { parameter: 'key' });
  let rowText = '';
  if (mode !== 'delete') {
    if (!isPlainObject(write.row)) throw new AppError('validation_failed', 'row must be a JSON object', { pointer: write.rowPointer });
    rowText = JSON.stringify(write.row);
    const textIssue = checkRowText(write.row, rowText);
    if (textIssue) throw new AppError('validation_failed', textIssue.detail, { pointer: `${write.rowPointer}${textIssue.pointer}` });
  }

  // Not an id (a stray path segment, a NUL byte PostgreSQL would refuse): no such store.
  const store = isUuid(write.storeId) ? await new StoreRepository(trx, write.workspaceId).lock(dialect, write.storeId) : undefined;
  if (!store) throw notFound('store');
  const rows = new StoreRowRepository(trx, store);
  if (mode !== 'delete') {
    const violations = rowViolations(rowValidator(store.id, store.schema_version, store.schema), write.row);
    if (violations.length > 0) {
      throw AppError.many(
        'validation_failed',
        violations.map((v) => ({ code: 'validation_failed', detail: v.detail, source: { pointer: `${write.rowPointer}${v.pointer}` } })),
      );
    }
  }

  const existing = await rows.find(write.key);
  if (mode === 'insert' && existing)
    throw new AppError('row_exists', `a row with key "${write.key}" already exists in this store; PUT without mode "insert" replaces it`);
  if ((mode === 'update' || mode === 'delete') && !existing)
    throw new AppError('row_not_found', `no row with key "${write.key}" in this store`);

  const at = writeTime(write.now, store);
  const by = { workflow_id: write.workflowId, execution_id: write.executionId };
  const stores = new StoreRepository(trx, write.workspaceId);
  if (mode === 'delete') {
    await rows.remove(write.key);
    await rows.addTombstone(write.key, at, write.workflowId);
    await stores.updateLocked(store.id, { row_count: store.row_count - 1, last_write_at: at });
    return {
      key: write.key,
      row: JSON.parse(existing!.row) as Record<string, unknown>,
      created: false,
      deleted: true,
      created_at: existing!.created_at,
      updated_at: at,
      ...by,
    };
  }
  if (existing) {
    await rows.replace(write.key, { row: rowText, updated_at: at, ...by });
    await stores.updateLocked(store.id, { last_write_at: at });
    return {
      key: write.key,
      row: write.row as Record<string, unknown>,
      created: false,
      deleted: false,
      created_at: existing.created_at,
      updated_at: at,
      ...by,
    };
  }
  if (store.row_count >= store.row_cap) {
    throw new AppError(
      'row_cap_exceeded',
      `the store holds ${store.row_count} rows, its row_cap; delete rows or raise row_cap to add more`,
      undefined,
      {
        meta: { row_count: store.row_count, row_cap: store.row_cap },
      },
    );
  }
  await rows.insert({ store_id: store.id, key: write.key, row: rowText, created_at: at, updated_at: at, ...by });
  // A key's tombstone says it is gone; written again, it is not (see the deletions feed).
  await rows.removeTombstone(write.key);
  await stores.updateLocked(store.id, { row_count: store.row_count + 1, last_write_at: at });
  return {
    key: write.key,
    row: write.row as Record<string, unknown>,
    created: true,
    deleted: false,
    created_at: at,
    updated_at: at,
    ...by,
  };
}

/** max(now, the store's last write + 1 µs): strictly increasing within a store. */
export function writeTime(now: string, store: Pick<StoreRow, 'last_write_at'>): string {
  if (store.last_write_at === null || store.last_write_at < now) return now;
  return formatMicros(parseTimestampMicros(store.last_write_at)! + 1);
}
