import readline from 'node:readline';
import type { Readable } from 'node:stream';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../errors/app-error.js';
import { canonicalTimestamp, type Clock } from '../../lib/clock.js';
import { isPlainObject } from '../../lib/json.js';
import { rowValidator, rowViolations } from '../../store/row-schema.js';
import { checkRowText } from '../../store/row-text.js';
import { keyProblem } from '../../store/store-keys.js';
import type { StoreRow } from '../../store/store-repository.js';
import type { Actor } from '../workflows/workflow-service.js';
import { DUMP_FORMAT_TAG } from './store-dump.js';
import type { StoreService } from './store-service.js';

/** Problems listed in the report; past this, only counted. */
export const MAX_REPORTED = 1000;
/**
 * Rows per transaction, and per INSERT statement. One commit per 5,000 rows keeps a million-row
 * restore at 200 commits; 500 rows x 6 columns stays under both dialects' parameter limits.
 */
const BATCH_ROWS = 5000;
const INSERT_ROWS = 500;

export interface RestoreProblem {
  line: number;
  key: string | null;
  code: string;
  message: string;
  /** JSON Pointers into the line's object (`/row/amount`). */
  pointers: string[];
}

export interface RestoreReport {
  store: StoreRow;
  lines: number;
  imported: number;
  failed: number;
  errors: RestoreProblem[];
  duplicates: { count: number; lines: { line: number; key: string }[] };
}

interface PendingRow {
  line: number;
  key: string;
  row: string;
  created_at: string;
  updated_at: string;
}

/**
 * `POST /stores/restore`: a NEW store from an NDJSON dump, read line by line from the request
 * stream (never whole). The header makes the store (a malformed one is 400 and nothing is
 * made; a taken slug is 409); every row is then checked against the header's schema, the valid
 * ones imported in batches of BATCH_ROWS per transaction, each failure reported. A key met
 * again replaces the earlier line's row (the later line wins) and the report says so.
 */
export async function restoreStore(deps: { db: Kysely<Database>; clock: Clock; stores: StoreService }, actor: Actor, slug: string, body: Readable): Promise<RestoreReport> {
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
  const values: Record<string, unknown> = { name: header.name, slug, schema: header.schema };
  if (header.description !== undefined && header.description !== null) values.description = header.description;
  if (header.row_cap !== undefined) values.row_cap = header.row_cap;
  const store = await deps.stores.create(actor, { values, pointer: (name) => (name === 'slug' ? '' : `/header/${name}`) });

  const report: RestoreReport = { store, lines: 0, imported: 0, failed: 0, errors: [], duplicates: { count: 0, lines: [] } };
  const fail = (problem: RestoreProblem) => {
    report.failed += 1;
    if (report.errors.length < MAX_REPORTED) report.errors.push(problem);
  };
  const duplicate = (line: number, key: string) => {
    report.duplicates.count += 1;
    if (report.duplicates.lines.length < MAX_REPORTED) report.duplicates.lines.push({ line, key });
  };
  const validate = rowValidator(store.id, store.schema_version, store.schema);
  const now = deps.clock.now();
  let batch = new Map<string, PendingRow>();
  const state = { rowCount: 0, lastWriteAt: null as string | null };

  while (true) {
    const next = await iterator.next();
    if (next.done) break;
    lineNo += 1;
    const text = next.value;
    if (text.trim() === '') continue;
    report.lines += 1;
    const parsed = parseRowLine(text, lineNo, now, validate);
    if ('problem' in parsed) {
      fail(parsed.problem);
      continue;
    }
    if (batch.has(parsed.key)) {
      batch.delete(parsed.key);
      duplicate(lineNo, parsed.key);
    }
    batch.set(parsed.key, parsed);
    if (batch.size >= BATCH_ROWS) {
      await importBatch(deps.db, store, batch, state, report, fail, duplicate);
      batch = new Map();
    }
  }
  if (batch.size > 0) await importBatch(deps.db, store, batch, state, report, fail, duplicate);
  store.row_count = state.rowCount;
  store.last_write_at = state.lastWriteAt;
  return report;
}

interface DumpHeader {
  name: unknown;
  description?: unknown;
  schema: unknown;
  row_cap?: unknown;
}

function parseHeader(text: string, line: number): DumpHeader {
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch {
    throw new AppError('invalid_body', `line ${line}: the header is not JSON; a dump starts with {"format":"${DUMP_FORMAT_TAG}", name, slug, description, schema, row_cap}`);
  }
  if (!isPlainObject(header)) throw new AppError('invalid_body', `line ${line}: the header must be a JSON object`);
  if (header.format !== DUMP_FORMAT_TAG) throw new AppError('invalid_body', `line ${line}: the header's format must be "${DUMP_FORMAT_TAG}", got ${JSON.stringify(header.format ?? null)}`);
  if (typeof header.name !== 'string' || header.name.trim() === '') throw new AppError('invalid_body', `line ${line}: the header needs the store's name (a non-empty string)`);
  if (!isPlainObject(header.schema)) throw new AppError('invalid_body', `line ${line}: the header needs the store's schema (a JSON Schema object)`);
  return header as unknown as DumpHeader;
}

function parseRowLine(text: string, line: number, now: string, validate: Parameters<typeof rowViolations>[0]): PendingRow | { problem: RestoreProblem } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: { line, key: null, code: 'malformed_json', message: `the line is not JSON: ${(error as Error).message}`, pointers: [] } };
  }
  if (!isPlainObject(value)) return { problem: { line, key: null, code: 'validation_failed', message: 'a row line must be an object {key, row, created_at, updated_at}', pointers: [''] } };
  const key = typeof value.key === 'string' ? value.key : null;
  const problem = key === null ? 'key must be a string' : keyProblem(key);
  if (problem !== null) return { problem: { line, key, code: 'invalid_key', message: problem, pointers: ['/key'] } };
  if (!isPlainObject(value.row)) return { problem: { line, key, code: 'validation_failed', message: 'row must be a JSON object', pointers: ['/row'] } };
  const times: string[] = [];
  for (const field of ['created_at', 'updated_at'] as const) {
    const raw = value[field];
    const time = raw === undefined ? now : typeof raw === 'string' ? canonicalTimestamp(raw) : null;
    if (time === null) return { problem: { line, key, code: 'validation_failed', message: `${field} must be an RFC 3339 timestamp`, pointers: [`/${field}`] } };
    times.push(time);
  }
  const rowText = JSON.stringify(value.row);
  const textIssue = checkRowText(value.row, rowText);
  if (textIssue) return { problem: { line, key, code: 'validation_failed', message: textIssue.detail, pointers: [`/row${textIssue.pointer}`] } };
  const violations = rowViolations(validate, value.row);
  if (violations.length > 0) {
    return { problem: { line, key, code: 'validation_failed', message: violations.map((v) => v.detail).join('; '), pointers: violations.map((v) => `/row${v.pointer}`) } };
  }
  return { line, key: key!, row: rowText, created_at: times[0]!, updated_at: times[1]! };
}

/**
 * One transaction: keys already imported by an earlier batch are replaced (a duplicate, the
 * later line winning), new keys inserted up to the cap (past it, each is reported
 * `row_cap_exceeded`), and the store's count and last write time follow.
 */
async function importBatch(
  db: Kysely<Database>,
  store: StoreRow,
  batch: Map<string, PendingRow>,
  state: { rowCount: number; lastWriteAt: string | null },
  report: RestoreReport,
  fail: (problem: RestoreProblem) => void,
  duplicate: (line: number, key: string) => void,
): Promise<void> {
  const rows = [...batch.values()];
  await db.transaction().execute(async (trx) => {
    const existing = await existingKeys(trx, store.id, rows.map((r) => r.key));
    const fresh: PendingRow[] = [];
    let last = state.lastWriteAt;
    for (const row of rows) {
      if (existing.has(row.key)) {
        duplicate(row.line, row.key);
        await trx.updateTable('store_rows').set({ row: row.row, created_at: row.created_at, updated_at: row.updated_at }).where('store_id', '=', store.id).where('key', '=', row.key).execute();
      } else if (state.rowCount + fresh.length >= store.row_cap) {
        fail({ line: row.line, key: row.key, code: 'row_cap_exceeded', message: `the store's row_cap (${store.row_cap}) is reached`, pointers: [] });
        continue;
      } else {
        fresh.push(row);
      }
      if (last === null || row.updated_at > last) last = row.updated_at;
      report.imported += existing.has(row.key) ? 0 : 1;
    }
    for (let i = 0; i < fresh.length; i += INSERT_ROWS) {
      const values = fresh.slice(i, i + INSERT_ROWS).map((r) => ({ store_id: store.id, key: r.key, row: r.row, created_at: r.created_at, updated_at: r.updated_at, workflow_id: null, execution_id: null }));
      await trx.insertInto('store_rows').values(values).execute();
    }
    state.rowCount += fresh.length;
    state.lastWriteAt = last;
    await trx.updateTable('stores').set({ row_count: state.rowCount, last_write_at: last }).where('id', '=', store.id).execute();
  });
}

async function existingKeys(trx: Transaction<Database>, storeId: string, keys: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  if (keys.length === 0) return found;
  for (let i = 0; i < keys.length; i += INSERT_ROWS) {
    const rows = await trx.selectFrom('store_rows').select('key').where('store_id', '=', storeId).where('key', 'in', keys.slice(i, i + INSERT_ROWS)).execute();
    for (const row of rows) found.add(row.key);
  }
  return found;
}
