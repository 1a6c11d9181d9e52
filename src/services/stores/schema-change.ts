import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { rowViolations } from '../../store/row-schema.js';
import type { StoreRow } from '../../store/store-repository.js';
import { StoreRowRepository } from '../../store/store-row-repository.js';

/**
 * Checking a new schema against a store's rows without stopping its writers for the whole scan.
 *
 * 1. `scanRows`, outside any transaction: note the store's last write time W, then read the
 *    rows in key order, batch by batch, validating those written at or before W. Writers go on
 *    meanwhile, between and during the batches.
 * 2. `remainingViolations`, in the final transaction that holds the store's lock (so no row can
 *    change until the new schema commits): validate every row written after W (the store's
 *    write times increase in commit order, so that is exactly the rows the scan may have missed
 *    or seen in an older version), and drop the scan's violators that were written or deleted
 *    after W.
 * The schema commits in that transaction only when nothing violates it.
 */
export const SCAN_BATCH = 1000;
/** Violating keys remembered from the scan; further ones are only counted (see remainingViolations). */
export const MAX_TRACKED_VIOLATORS = 10_000;
export const FIRST_KEYS = 10;

export interface RowScan {
  /** The store's last write time when the scan began ('' when nothing was ever written). */
  notAfter: string;
  /** Violating keys in key order, the first MAX_TRACKED_VIOLATORS of them. */
  violators: string[];
  /** Violators beyond the tracked ones. */
  untracked: number;
  /** The first violator's first problem, for the error's detail. */
  example: { key: string; detail: string } | null;
}

export interface SchemaViolations {
  count: number;
  firstKeys: string[];
  example: { key: string; detail: string } | null;
}

export async function scanRows(db: Kysely<Database>, store: StoreRow, validate: ValidateFunction): Promise<RowScan> {
  const rows = new StoreRowRepository(db, store);
  const scan: RowScan = { notAfter: store.last_write_at ?? '', violators: [], untracked: 0, example: null };
  if (scan.notAfter === '') return scan;
  let afterKey: string | null = null;
  while (true) {
    const batch = await rows.scan(afterKey, scan.notAfter, SCAN_BATCH);
    for (const row of batch) {
      const problems = rowViolations(validate, JSON.parse(row.row));
      if (problems.length === 0) continue;
      scan.example ??= { key: row.key, detail: problems[0]!.detail };
      if (scan.violators.length < MAX_TRACKED_VIOLATORS) scan.violators.push(row.key);
      else scan.untracked += 1;
    }
    if (batch.length < SCAN_BATCH) return scan;
    afterKey = batch.at(-1)!.key;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * The violations left once the rows written since the scan are checked; `trx` must hold the
 * store's lock. Violators past the tracked ones cannot be told apart, so they all still count:
 * the answer may overstate a refusal by rows fixed during the scan, never let a violator in.
 */
export async function remainingViolations(
  trx: Transaction<Database>,
  store: StoreRow,
  validate: ValidateFunction,
  scan: RowScan,
): Promise<SchemaViolations> {
  const rows = new StoreRowRepository(trx, store);
  const changed = new Set(await rows.deletedAfter(scan.notAfter));
  const fresh: string[] = [];
  let example: RowScan['example'] = scan.example;
  for (const row of await rows.writtenAfter(scan.notAfter)) {
    changed.add(row.key);
    const problems = rowViolations(validate, JSON.parse(row.row));
    if (problems.length === 0) continue;
    fresh.push(row.key);
    example ??= { key: row.key, detail: problems[0]!.detail };
  }
  const kept = scan.violators.filter((key) => !changed.has(key));
  const keys = [...kept, ...fresh].sort(compareKeys);
  const count = keys.length + scan.untracked;
  if (count === 0) return { count, firstKeys: [], example: null };
  // The example must still be a violator; otherwise describe the first one that is.
  if (keys.length > 0 && (!example || !keys.includes(example.key))) {
    const first = await rows.find(keys[0]!);
    const problems = first ? rowViolations(validate, JSON.parse(first.row)) : [];
    example = problems.length > 0 ? { key: keys[0]!, detail: problems[0]!.detail } : null;
  }
  return { count, firstKeys: keys.slice(0, FIRST_KEYS), example };
}

/** Key order as the databases sort text here: by code point (UTF-8 bytes), not UTF-16 units. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
