import type { Kysely, Transaction } from 'kysely';
import type { SqlDialect } from '../../db/dialect/dialect.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../errors/app-error.js';
import type { StoreRow } from '../../store/store-repository.js';
import { lockRestoringStore, updateRestoringStore } from '../../store/store-restores.js';
import type { PendingRow } from './restore-lines.js';
import type { RestoreReport } from './restore-report.js';

/** Rows per INSERT statement: 500 rows x 7 columns stays under both dialects' parameter limits. */
const INSERT_ROWS = 500;

/**
 * One batch of a restore, in one transaction that holds the store's lock (as every writer does):
 * keys an earlier batch imported are replaced (the later line wins), new keys inserted up to the
 * cap (past it, each fails `row_cap_exceeded`), and the store's count and last write time follow
 * from the locked row, never from the restore's own tally: the last write time only moves
 * forward, which the change cursor relies on (store-write.ts). The lease is renewed, or, on the
 * last batch (`leaseUntil` null), cleared: the store is visible from that commit on.
 */
export async function importBatch(db: Kysely<Database>, dialect: SqlDialect, storeId: string, rows: readonly PendingRow[], leaseUntil: string | null, report: RestoreReport): Promise<StoreRow> {
  return db.transaction().execute(async (trx) => {
    const store = await lockRestoringStore(trx, dialect, storeId);
    if (!store) throw new AppError('request_timeout', 'the restore was abandoned: its body stopped coming for longer than the restore lease, and the partial store was discarded; send the dump again');
    const existing = await existingKeys(trx, storeId, rows.map((r) => r.key));
    const fresh: PendingRow[] = [];
    let last = store.last_write_at;
    for (const row of rows) {
      if (existing.has(row.key)) {
        await trx.updateTable('store_rows').set({ row: row.row, created_at: row.created_at, updated_at: row.updated_at }).where('store_id', '=', storeId).where('key', '=', row.key).execute();
        report.replaced(row.key, row.line);
      } else if (store.row_count + fresh.length >= store.row_cap) {
        report.fail({ line: row.line, key: row.key, errors: [{ pointer: '', detail: `the store's row_cap (${store.row_cap}) is reached` }] });
        continue;
      } else {
        fresh.push(row);
      }
      if (last === null || row.updated_at > last) last = row.updated_at;
    }
    for (let i = 0; i < fresh.length; i += INSERT_ROWS) {
      const values = fresh.slice(i, i + INSERT_ROWS).map((r) => ({ store_id: storeId, key: r.key, row: r.row, created_at: r.created_at, updated_at: r.updated_at, workflow_id: null, execution_id: null }));
      await trx.insertInto('store_rows').values(values).execute();
    }
    for (const row of fresh) report.imported(row.key, row.line);
    const changes = { row_count: store.row_count + fresh.length, last_write_at: last, restoring_until: leaseUntil };
    await updateRestoringStore(trx, storeId, changes);
    return { ...store, ...changes };
  });
}

async function existingKeys(trx: Transaction<Database>, storeId: string, keys: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < keys.length; i += INSERT_ROWS) {
    const rows = await trx.selectFrom('store_rows').select('key').where('store_id', '=', storeId).where('key', 'in', keys.slice(i, i + INSERT_ROWS)).execute();
    for (const row of rows) found.add(row.key);
  }
  return found;
}
