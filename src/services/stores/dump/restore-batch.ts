import type { Kysely } from 'kysely';
import type { SqlDialect } from '../../../db/dialect/dialect.js';
import type { Database } from '../../../db/schema.js';
import { AppError } from '../../../errors/app-error.js';
import type { StoreRow } from '../../../store/store-repository.js';
import { heldRowKeys, insertRestoredRows } from '../../../store/store-restore-rows.js';
import { lockRestoringStore, updateRestoringStore } from '../../../store/store-restores.js';
import type { PendingRows } from './pending-rows.js';
import type { RestoreReport } from './restore-report.js';

/** Rows per INSERT statement: 500 rows x 5 parameters stays under both dialects' parameter limits. */
const INSERT_ROWS = 500;

/**
 * One batch of a restore, in one transaction that holds the store's lock (as every writer does):
 * keys an earlier batch imported are replaced (the later line wins), new keys inserted up to the
 * cap (past it, each fails `row_cap_exceeded`), and the store's count and last write time follow
 * from the locked row, never from the restore's own tally: the last write time only moves
 * forward, which the change cursor relies on (store-write.ts). The lease is renewed, or, on the
 * last batch (`leaseUntil` null), cleared: the store is visible from that commit on.
 *
 * The rows are taken from the batch's buffer INSERT_ROWS at a time, in the batch's order, so
 * only one statement's strings exist at once (pending-rows.ts says why). The keys of a batch
 * are distinct, so looking them up a chunk at a time finds what one look-up of the whole batch
 * would.
 */
export async function importBatch(
  db: Kysely<Database>,
  dialect: SqlDialect,
  storeId: string,
  rows: PendingRows,
  leaseUntil: string | null,
  report: RestoreReport,
): Promise<StoreRow> {
  return db.transaction().execute(async (trx) => {
    const store = await lockRestoringStore(trx, dialect, storeId);
    if (!store)
      throw new AppError(
        'request_timeout',
        'the restore was abandoned: its body stopped coming for longer than the restore lease, and the partial store was discarded; send the dump again',
      );
    let fresh = 0;
    let last = store.last_write_at;
    for (let next = 0; next < rows.count;) {
      const chunk: number[] = [];
      for (; next < rows.count && chunk.length < INSERT_ROWS; next++) if (rows.isLive(next)) chunk.push(next);
      const keys = chunk.map((index) => rows.key(index));
      const existing = await heldRowKeys(trx, dialect.name, storeId, keys);
      const values: string[] = [];
      const inserted: number[] = [];
      for (let i = 0; i < chunk.length; i++) {
        const index = chunk[i]!;
        const key = keys[i]!;
        const updatedAt = rows.updatedAt(index);
        if (existing.has(key)) {
          await trx
            .updateTable('store_rows')
            .set({ row: rows.row(index), created_at: rows.createdAt(index), updated_at: updatedAt })
            .where('store_id', '=', storeId)
            .where('key', '=', key)
            .execute();
          report.replaced(key, rows.line(index));
        } else if (store.row_count + fresh >= store.row_cap) {
          report.fail({
            line: rows.line(index),
            key,
            errors: [{ pointer: '', detail: `the store's row_cap (${store.row_cap}) is reached` }],
          });
          continue;
        } else {
          values.push(storeId, key, rows.row(index), rows.createdAt(index), updatedAt);
          inserted.push(i);
          fresh += 1;
        }
        if (last === null || updatedAt > last) last = updatedAt;
      }
      await insertRestoredRows(trx, dialect.name, values, inserted.length);
      for (const i of inserted) report.imported(keys[i]!, rows.line(chunk[i]!));
    }
    const changes = { row_count: store.row_count + fresh, last_write_at: last, restoring_until: leaseUntil };
    await updateRestoringStore(trx, storeId, changes);
    return { ...store, ...changes };
  });
}
