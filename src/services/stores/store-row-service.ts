import type { Kysely } from 'kysely';
import type { SqlDialect } from '../../db/dialect/dialect.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isPlainObject } from '../../lib/json.js';
import { keyProblem } from '../../store/store-keys.js';
import { StoreRowRepository, type StoreRowRecord } from '../../store/store-row-repository.js';
import { STORE_WRITE_MODES, writeStoreRow, type StoreRowWriteResult, type StoreWriteMode } from '../../store/store-write.js';
import type { Actor } from '../workflows/workflow-service.js';
import { RowWriteBatch, type RowWrite } from './row-write-batch.js';
import type { StoreService } from './store-service.js';

/** PUT takes the row, and optionally the step's modes but delete (DELETE does that). */
const PUT_MODES: readonly string[] = STORE_WRITE_MODES.filter((mode) => mode !== 'delete');

/** Rows through the API: every write goes through the one validated write path (store/store-write.ts). */
export class StoreRowService {
  /** SQLite's group commit of row writes (row-write-batch.ts); null on PostgreSQL. */
  private readonly batch: RowWriteBatch | null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: SqlDialect,
    private readonly clock: Clock,
    private readonly stores: StoreService,
  ) {
    this.batch = dialect.rowLocks ? null : new RowWriteBatch(db);
  }

  /** A row write in a transaction that has committed when the promise resolves. */
  private transaction<T>(write: RowWrite<T>): Promise<T> {
    return this.batch ? this.batch.write(write) : this.db.transaction().execute(write);
  }

  /** `PUT /stores/:store_id/rows/:key` with `{data: {row, mode?}}`. */
  async put(actor: Actor, storeId: string, key: string, body: unknown): Promise<StoreRowWriteResult> {
    checkKey(key);
    if (!isPlainObject(body) || !isPlainObject(body.data))
      throw new AppError('invalid_document', 'the body must be {"data": {"row": {...}}}', { pointer: isPlainObject(body) ? '/data' : '' });
    const data = body.data;
    const unknown = Object.keys(data).find((name) => name !== 'row' && name !== 'mode');
    if (unknown !== undefined)
      throw new AppError('validation_failed', `unknown member "${unknown}": the body takes row (and optionally mode)`, {
        pointer: `/data/${unknown}`,
      });
    if (data.row === undefined) throw new AppError('validation_failed', 'row is required', { pointer: '/data/row' });
    if (data.mode !== undefined && (typeof data.mode !== 'string' || !PUT_MODES.includes(data.mode))) {
      throw new AppError('validation_failed', `mode must be one of ${PUT_MODES.join(', ')} (DELETE removes a row)`, {
        pointer: '/data/mode',
      });
    }
    // The store's existence is checked inside the write, under its lock.
    return this.transaction((trx) =>
      writeStoreRow(trx, this.dialect, {
        workspaceId: actor.workspaceId,
        storeId,
        key,
        row: data.row,
        mode: (data.mode as StoreWriteMode | undefined) ?? 'upsert',
        workflowId: null,
        executionId: null,
        now: this.clock.now(),
        rowPointer: '/data/row',
      }),
    );
  }

  async get(actor: Actor, storeId: string, key: string): Promise<StoreRowRecord> {
    checkKey(key);
    const store = await this.stores.get(actor, storeId);
    const row = await new StoreRowRepository(this.db, store).find(key);
    if (!row) throw new AppError('row_not_found', `no row with key "${key}" in this store`);
    return row;
  }

  async remove(actor: Actor, storeId: string, key: string): Promise<void> {
    checkKey(key);
    await this.transaction((trx) =>
      writeStoreRow(trx, this.dialect, {
        workspaceId: actor.workspaceId,
        storeId,
        key,
        mode: 'delete',
        workflowId: null,
        executionId: null,
        now: this.clock.now(),
        rowPointer: '/data/row',
      }),
    );
  }
}

function checkKey(key: string): void {
  const problem = keyProblem(key);
  if (problem !== null) throw new AppError('invalid_key', problem, { parameter: 'key' });
}
