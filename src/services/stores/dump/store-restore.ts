import readline from 'node:readline';
import type { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../../../db/dialect/dialect.js';
import type { Database } from '../../../db/schema.js';
import { AppError } from '../../../errors/app-error.js';
import { addMs, type Clock } from '../../../lib/clock.js';
import { rowValidator } from '../../../store/row-schema.js';
import type { StoreRow } from '../../../store/store-repository.js';
import type { Actor } from '../../workflows/workflow-service.js';
import { importBatch } from './restore-batch.js';
import { PendingRows } from './pending-rows.js';
import { parseHeader, parseRowLine } from './restore-lines.js';
import { RestoreReport, type RestoreMeta } from './restore-report.js';
import type { StoreService } from '../store-service.js';

/**
 * Rows per transaction. One commit per 5,000 rows keeps a million-row restore at 200 commits,
 * and SQLite's single writer is never held for longer than one batch.
 */
const BATCH_ROWS = 5000;
/**
 * A batch is imported sooner when its rows reach this many bytes of UTF-8 (key, row text and
 * times): the batch's buffer (pending-rows.ts) then stays under twice this, whatever the rows'
 * size (rows of up to 1 MiB would otherwise make 5,000-row batches of gigabytes). Rows of the
 * benchmark's ~200 bytes fill 5,000 rows with 1.4 MB, so only batches of rows averaging over
 * ~1.6 KB are cut short.
 */
const BATCH_BYTES = 8 * 1024 * 1024;
/**
 * How long a restore may go without committing a batch before it counts as abandoned (its
 * process died, or its client stopped sending) and the sweeper deletes its store. A batch takes
 * well under a second to import; the lease is renewed by every batch, and by a short one when
 * half of it has passed (a body of failing lines commits no row).
 */
export const RESTORE_LEASE_MS = 10 * 60_000;

export interface RestoreDeps {
  db: Kysely<Database>;
  dialect: SqlDialect;
  clock: Clock;
  stores: StoreService;
}

export interface RestoreRequest {
  /** The new store's slug (409 `slug_taken` when taken). */
  slug: string;
  /** The new store's name; the dump's when absent. */
  name?: string;
}

export interface RestoreResult {
  /** The new store, as its last batch committed it. */
  store: StoreRow;
  meta: RestoreMeta;
}

/**
 * `POST /stores/restore`: a NEW store from an NDJSON dump, read line by line from the request
 * stream (never whole). The header makes the store (a malformed one is 400 and nothing is
 * made; a taken slug is 409); every row is then checked against the header's schema, the valid
 * ones imported in batches of BATCH_ROWS (fewer past BATCH_BYTES) per transaction, each failure
 * reported. A key met again replaces the earlier line's row (the later line wins) and the
 * report says so.
 *
 * The store is invisible until the last batch commits (`restoring_until`, docs/stores.md): no
 * route, step or lookup can read or write it while the rows arrive, so nothing can put it over
 * its cap, move its last write time back, or hand out a cursor into half a restore. A restore
 * that fails (a broken body, a database error) gives its store up to the sweeper, and so does
 * one whose lease runs out.
 */
export async function restoreStore(deps: RestoreDeps, actor: Actor, request: RestoreRequest, body: Readable): Promise<RestoreResult> {
  const lines = readline.createInterface({ input: body, crlfDelay: Infinity });
  const iterator = lines[Symbol.asyncIterator]();
  let lineNo = 0;
  let headerText: string | undefined;
  while (headerText === undefined) {
    const next = await iterator.next();
    if (next.done) throw new AppError('invalid_body', 'the body is empty: a dump starts with its header line');
    lineNo += 1;
    if (next.value.trim() !== '') headerText = next.value;
  }
  const header = parseHeader(headerText, lineNo);
  const values: Record<string, unknown> = { name: request.name ?? header.name, slug: request.slug, schema: header.schema };
  if (header.description !== undefined && header.description !== null) values.description = header.description;
  if (header.row_cap !== undefined) values.row_cap = header.row_cap;
  const lease = () => addMs(deps.clock.now(), RESTORE_LEASE_MS);
  const created = await deps.stores.create(
    actor,
    { values, pointer: (name) => (name === 'slug' ? '' : `/header/${name}`) },
    { restoringUntil: lease() },
  );

  const report = new RestoreReport();
  let store: StoreRow;
  try {
    const validate = rowValidator(created.id, created.schema_version, created.schema);
    const now = deps.clock.now();
    const batch = new PendingRows(BATCH_ROWS, BATCH_BYTES);
    let renewBy = deps.clock.nowMs() + RESTORE_LEASE_MS / 2;
    const flush = async () => {
      // The body waits while the batch commits. On PostgreSQL the import awaits the network, and
      // readline went on reading meanwhile, up to its iterator's 1,024 queued lines: 369 KB of
      // the benchmark's dump per batch on average, against 62 KB (one socket read) paused. On
      // SQLite the import never yields to the event loop, so nothing is read during it anyway.
      lines.pause();
      await importBatch(deps.db, deps.dialect, created.id, batch, lease(), report);
      lines.resume();
      batch.clear();
      renewBy = deps.clock.nowMs() + RESTORE_LEASE_MS / 2;
    };
    while (true) {
      const next = await iterator.next();
      if (next.done) break;
      lineNo += 1;
      if (next.value.trim() === '') continue;
      const parsed = parseRowLine(next.value, lineNo, now, validate);
      if ('failure' in parsed) report.fail(parsed.failure);
      else report.read(parsed.key, lineNo, batch.add(parsed));
      if (batch.full || (lineNo % 1000 === 0 && deps.clock.nowMs() >= renewBy)) await flush();
    }
    store = await importBatch(deps.db, deps.dialect, created.id, batch, null, report);
  } catch (error) {
    lines.close();
    await deps.stores.abandonRestore(created.id).catch(() => undefined);
    throw error;
  }
  await analyzeRows(deps, report.rowsImported);
  return { store, meta: report.meta() };
}

/**
 * PostgreSQL plans from table statistics, which a bulk import leaves stale until autovacuum's
 * analyze: right after a restore of 100,000 rows the row list was once measured reading and
 * sorting every row of the store per page (37.8 ms) instead of walking store_rows_feed_idx
 * (0.097 ms once analyzed). ANALYZE samples a bounded number of rows (30,000 at the default
 * statistics target: 40 to 60 ms here), so its cost does not grow with the table; it runs after
 * the last commit, outside the batches. The restore has committed by then: a failure here costs
 * only the plan, never the answer.
 */
async function analyzeRows(deps: RestoreDeps, imported: number): Promise<void> {
  if (deps.dialect.name !== 'postgres' || imported === 0) return;
  try {
    await sql`analyze store_rows`.execute(deps.db);
  } catch {
    // The statistics stay as they were; autovacuum's analyze will come.
  }
}
