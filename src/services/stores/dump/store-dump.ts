import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { isPlainObject } from '../../../lib/json.js';
import type { StoreRow } from '../../../store/store-repository.js';

export const DUMP_FORMATS = ['ndjson', 'csv', 'json'] as const;
export type DumpFormat = (typeof DUMP_FORMATS)[number];

/** The header line's `format`: a dump restores only into a reader of the same version. */
export const DUMP_FORMAT_TAG = 'service-store/v1';

/**
 * Rows read per query. Each page is a keyset step on the primary key (store_id, key), so page
 * 10,000 costs what page 1 does, and at most one page is in memory at a time.
 */
const PAGE_ROWS = 2000;

/** Each format's media type: what an Accept header must admit. */
export const DUMP_MEDIA_TYPES: Record<DumpFormat, string> = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv',
  json: 'application/json',
};

export const DUMP_CONTENT_TYPES: Record<DumpFormat, string> = {
  ndjson: `${DUMP_MEDIA_TYPES.ndjson}; charset=utf-8`,
  csv: `${DUMP_MEDIA_TYPES.csv}; charset=utf-8`,
  json: `${DUMP_MEDIA_TYPES.json}; charset=utf-8`,
};

interface DumpRow {
  key: string;
  row: string;
  created_at: string;
  updated_at: string;
}

/** A store's rows in key order, one page at a time, only as fast as the reader takes them. */
async function* pages(db: Kysely<Database>, storeId: string): AsyncGenerator<DumpRow[]> {
  let after: string | null = null;
  while (true) {
    let query = db.selectFrom('store_rows').select(['key', 'row', 'created_at', 'updated_at']).where('store_id', '=', storeId);
    if (after !== null) query = query.where('key', '>', after);
    const rows: DumpRow[] = await query.orderBy('key').limit(PAGE_ROWS).execute();
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < PAGE_ROWS) return;
    after = rows.at(-1)!.key;
  }
}

/** The NDJSON header: everything a restore needs to make the store again. */
export function dumpHeader(store: StoreRow): Record<string, unknown> {
  return {
    format: DUMP_FORMAT_TAG,
    name: store.name,
    slug: store.slug,
    description: store.description,
    schema: JSON.parse(store.schema),
    row_cap: store.row_cap,
  };
}

/**
 * The dump as a byte stream. `Readable.from` pulls the next chunk only when the socket has
 * drained the last (back-pressure), so memory stays at one page whatever the store's size. The
 * row text is the stored JSON, written as is (never parsed and printed again) in ndjson and json.
 */
export function dumpStream(db: Kysely<Database>, store: StoreRow, format: DumpFormat): Readable {
  return Readable.from(chunks(db, store, format), { objectMode: false });
}

async function* chunks(db: Kysely<Database>, store: StoreRow, format: DumpFormat): AsyncGenerator<string> {
  if (format === 'ndjson') {
    yield `${JSON.stringify(dumpHeader(store))}\n`;
    for await (const rows of pages(db, store.id)) yield rows.map(ndjsonLine).join('');
    return;
  }
  if (format === 'json') {
    let first = true;
    yield '[';
    for await (const rows of pages(db, store.id)) {
      yield (first ? '\n' : ',\n') + rows.map(jsonItem).join(',\n');
      first = false;
    }
    yield first ? ']\n' : '\n]\n';
    return;
  }
  const fields = topLevelFields(store.schema);
  yield stringify([['key', 'updated_at', ...fields]], CSV_OPTIONS);
  for await (const rows of pages(db, store.id)) {
    yield stringify(
      rows.map((r) => csvRecord(r, fields)),
      CSV_OPTIONS,
    );
  }
}

/** RFC 4180: records end with CRLF (line breaks inside a quoted value stay as they are). */
const CSV_OPTIONS = { record_delimiter: 'windows' } as const;

function jsonItem(r: DumpRow): string {
  return `{"key":${JSON.stringify(r.key)},"row":${r.row},"created_at":${JSON.stringify(r.created_at)},"updated_at":${JSON.stringify(r.updated_at)}}`;
}

function ndjsonLine(r: DumpRow): string {
  return `${jsonItem(r)}\n`;
}

/** The CSV's row columns: the schema's declared top-level properties, in the schema's order. */
export function topLevelFields(schemaText: string): string[] {
  const schema = JSON.parse(schemaText) as unknown;
  return isPlainObject(schema) && isPlainObject(schema.properties) ? Object.keys(schema.properties) : [];
}

/** Strings as they are, other scalars as their JSON text, nested values as JSON; absent is empty. */
function csvRecord(r: DumpRow, fields: string[]): string[] {
  const row = JSON.parse(r.row) as Record<string, unknown>;
  const record = [r.key, r.updated_at];
  for (const field of fields) {
    const value = Object.hasOwn(row, field) ? row[field] : undefined;
    record.push(value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));
  }
  return record;
}
