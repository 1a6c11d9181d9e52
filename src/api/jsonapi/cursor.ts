import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { SqlDialect } from '../../db/dialect/dialect.js';
import { canonicalTimestamp } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import { invalidParameter } from './filter-operand.js';
import { bind, reference } from './filter-sql.js';
import { formatSort, type SortKey } from './sort.js';

/**
 * Keyset cursors. A cursor is base64url JSON `{t, s, v}`: the resource type, the canonical sort
 * string and the row's values of every sort key (the last being `id`). It is opaque to callers
 * but not secret: it holds nothing beyond the sort values of a row the caller has already seen,
 * so it is validated (shape, type, sort, value kinds) rather than signed.
 */
export type CursorValue = string | number | boolean;
export type CursorParameter = 'page[after]' | 'page[before]';

interface CursorPayload {
  t: string;
  s: string;
  v: CursorValue[];
}

/** Cursors we issue are far shorter; this bounds the work spent on a hostile one. */
const MAX_CURSOR_LENGTH = 4096;

export function encodeCursor(type: string, sort: readonly SortKey[], row: Record<string, unknown>): string {
  const payload: CursorPayload = { t: type, s: formatSort(sort), v: sort.map((key) => rowValue(key, row[key.column])) };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/** The sort values a cursor holds, checked against the list it is used on. */
export function decodeCursor(token: string, type: string, sort: readonly SortKey[], parameter: CursorParameter): CursorValue[] {
  assertKeysetSort(sort, parameter);
  const payload = parsePayload(token);
  if (!payload)
    throw invalidParameter(parameter, `${parameter} is not a valid cursor; use the links.next or links.prev of a previous page`);
  const expected = formatSort(sort);
  if (payload.t !== type || payload.s !== expected) {
    throw invalidParameter(parameter, `${parameter} was issued for another list or sort; this list is ${type} sorted by ${expected}`);
  }
  if (payload.v.length !== sort.length || !sort.every((key, index) => isValueOfKind(key, payload.v[index]))) {
    throw invalidParameter(parameter, `${parameter} is not a valid cursor; use the links.next or links.prev of a previous page`);
  }
  return payload.v;
}

/**
 * Keyset paging needs a total order without NULLs: `a > NULL` is NULL on both dialects, so a
 * cursor on a nullable key would silently skip rows. Such sorts page by offset instead.
 */
export function assertKeysetSort(sort: readonly SortKey[], parameter: CursorParameter): void {
  const nullable = sort.find((key) => key.nullable);
  if (nullable) {
    throw invalidParameter(
      parameter,
      `${parameter} cannot be used with sort on '${nullable.attribute}', which can be null; page with page[offset] instead`,
    );
  }
}

export function isKeysetSort(sort: readonly SortKey[]): boolean {
  return sort.every((key) => !key.nullable);
}

/**
 * Rows strictly after `values` in `sort`'s order (pass the reversed sort for rows before), as
 * the lexicographic `(a, b, id) > (x, y, z)` expanded to
 * `a > x OR (a = x AND b > y) OR (a = x AND b = y AND id > z)` with each key's own direction.
 * Row-value comparison would be shorter but cannot mix directions. The redundant leading
 * `a >= x` lets both planners range-scan an index on the first key.
 */
export function keysetCondition(
  sort: readonly SortKey[],
  values: readonly CursorValue[],
  dialect: SqlDialect,
  tableAlias?: string,
): RawBuilder<SqlBool> {
  const columns = sort.map((key) => reference(tableAlias, key.column));
  const bound = values.map((value, index) => bind(value, sort[index]!.kind, dialect));
  const branches = sort.map((key, index) => {
    const equalities = columns.slice(0, index).map((column, j) => sql`${column} = ${bound[j]}`);
    const step = key.direction === 'asc' ? sql`${columns[index]} > ${bound[index]}` : sql`${columns[index]} < ${bound[index]}`;
    return sql`(${sql.join([...equalities, step], sql` AND `)})`;
  });
  const first = sort[0]!.direction === 'asc' ? sql`${columns[0]} >= ${bound[0]}` : sql`${columns[0]} <= ${bound[0]}`;
  return sql<SqlBool>`(${first} AND (${sql.join(branches, sql` OR `)}))`;
}

function parsePayload(token: string): CursorPayload | null {
  if (token.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) return null;
  try {
    const payload: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (!isPlainObject(payload) || typeof payload.t !== 'string' || typeof payload.s !== 'string' || !Array.isArray(payload.v)) return null;
    return payload as unknown as CursorPayload;
  } catch {
    return null;
  }
}

function isValueOfKind(key: SortKey, value: unknown): boolean {
  switch (key.kind) {
    case 'uuid':
      return isUuid(value);
    case 'integer':
      return Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'timestamp':
      return typeof value === 'string' && canonicalTimestamp(value) === value;
    case 'enum':
      return typeof value === 'string' && (key.values?.includes(value) ?? true);
    case 'string':
    case 'object':
      return typeof value === 'string';
  }
}

/** Normalises a row's value as the drivers return it (SQLite booleans are 0/1, pg bigints are strings). */
function rowValue(key: SortKey, value: unknown): CursorValue {
  if (value === null || value === undefined) {
    throw new Error(`cannot encode a cursor: the row has no value for sort column '${key.column}'`);
  }
  switch (key.kind) {
    case 'boolean':
      return typeof value === 'boolean' ? value : Number(value) !== 0;
    case 'integer':
    case 'number':
      return Number(value);
    default:
      return String(value);
  }
}
