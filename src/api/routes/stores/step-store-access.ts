import type { Kysely } from 'kysely';
import type { SqlDialect } from '../../../db/dialect/dialect.js';
import type { Database } from '../../../db/schema.js';
import { NonRetriableError } from '../../../engine/step-errors.js';
import { AppError } from '../../../errors/app-error.js';
import { formatMicros } from '../../../lib/clock.js';
import { isPlainObject } from '../../../lib/json.js';
import type { StepStoreAccess, StepStoreRow } from '../../../steps/step-runtime.js';
import { keyProblem } from '../../../store/store-keys.js';
import { StoreRepository, type StoreRow } from '../../../store/store-repository.js';
import { StoreRowRepository, type StoreRowRecord } from '../../../store/store-row-repository.js';
import { writeStoreRow } from '../../../store/store-write.js';
import { parseFilter } from '../../jsonapi/filter.js';
import { filterCondition } from '../../jsonapi/filter-sql.js';
import { rowFilterDefinition } from './row-filter.js';

const ALL_COLUMNS = ['key', 'row', 'created_at', 'updated_at', 'workflow_id', 'execution_id'] as const;

/**
 * The stores as the save_to_store and read_store steps see them, built by the composition root
 * (deps.ts) and handed to the engine as a narrow interface. It lives beside the row routes
 * because read_store filters with the row list's own filter language (row-filter.ts); the
 * engine itself imports nothing of the API. Writes go through the one validated write path,
 * inside the engine's transaction (StepEffect); every failure is a NonRetriableError carrying
 * the API's error code and, for schema violations, one pointer per violation into the step's
 * config (`/row/<field>`).
 */
export function stepStoreAccess(db: Kysely<Database>, dialect: SqlDialect): StepStoreAccess {
  return {
    write: (request) => async (trx) => {
      try {
        const result = await writeStoreRow(trx, dialect, {
          workspaceId: request.workspaceId,
          storeId: request.storeId,
          key: request.key,
          row: request.row,
          mode: request.mode,
          workflowId: request.workflowId,
          executionId: request.executionId,
          now: request.now,
          rowPointer: '/row',
        });
        return {
          store_id: request.storeId,
          key: result.key,
          row: result.row,
          mode: request.mode,
          created: result.created,
          deleted: result.deleted,
          created_at: result.created_at,
          updated_at: result.updated_at,
        };
      } catch (error) {
        throw asStepError(error, request.storeId);
      }
    },

    get: async ({ workspaceId, storeId, key }) => {
      try {
        const problem = keyProblem(key);
        if (problem !== null) throw new AppError('invalid_key', problem, { pointer: '/key' });
        const store = await findStore(db, workspaceId, storeId);
        const row = await new StoreRowRepository(db, store).find(key);
        return row ? toStepRow(row) : null;
      } catch (error) {
        throw asStepError(error, storeId);
      }
    },

    list: async ({ workspaceId, storeId, filter, limit }) => {
      try {
        const store = await findStore(db, workspaceId, storeId);
        const definition = rowFilterDefinition(store, dialect);
        const condition =
          filter === undefined
            ? null
            : filterCondition(parseFilter(asQueryValues(filter), definition), definition, dialect, { scope: null });
        const rows = await new StoreRowRepository(db, store).feed({
          after: { at: formatMicros(0), key: '' },
          condition,
          limit,
          columns: ALL_COLUMNS,
        });
        return rows.map((row) => toStepRow(row as StoreRowRecord));
      } catch (error) {
        throw asStepError(error, storeId);
      }
    },
  };
}

async function findStore(db: Kysely<Database>, workspaceId: string, storeId: string): Promise<StoreRow> {
  const store = await new StoreRepository(db, workspaceId).find(storeId);
  if (!store) throw new AppError('not_found', 'store not found');
  return store;
}

function toStepRow(row: StoreRowRecord): StepStoreRow {
  return {
    key: row.key,
    row: JSON.parse(row.row) as Record<string, unknown>,
    created_at: row.created_at,
    updated_at: row.updated_at,
    workflow_id: row.workflow_id,
    execution_id: row.execution_id,
  };
}

/**
 * The config's filter as qs would deliver the same query string: JSON numbers and booleans
 * become their text, so `{"row.total": {"gt": 10}}` means `filter[row.total][gt]=10`.
 */
function asQueryValues(value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(asQueryValues);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, asQueryValues(item)]));
  return value;
}

/**
 * A store failure as the step's error: not retriable (the same write fails the same way), with
 * the API's code. A store of another workspace reads exactly like an unknown one.
 */
function asStepError(error: unknown, storeId: string): unknown {
  if (!(error instanceof AppError)) return error;
  if (error.code === 'not_found') return new NonRetriableError(`store ${storeId} not found`, { code: 'store_not_found' });
  const errors = error.items.map((item) => ({
    code: item.code,
    detail: item.detail,
    ...(item.source && 'pointer' in item.source ? { pointer: item.source.pointer } : {}),
    ...(item.source && 'parameter' in item.source ? { parameter: item.source.parameter } : {}),
    ...(item.meta ? { meta: item.meta } : {}),
  }));
  const message = errors.length > 1 ? `${errors.length} problems; the first: ${error.message}` : error.message;
  return new NonRetriableError(message, { code: error.code, details: { errors } });
}
