import { AppError } from '../../../errors/app-error.js';
import { canonicalTimestamp } from '../../../lib/clock.js';
import { isPlainObject } from '../../../lib/json.js';
import { findTooDeep } from '../../../lib/json-depth.js';
import { rowViolations } from '../../../store/row-schema.js';
import { checkRowText } from '../../../store/row-text.js';
import { keyProblem } from '../../../store/store-keys.js';
import { DUMP_FORMAT_TAG } from './store-dump.js';
import type { RestoreFailure } from './restore-report.js';

export interface DumpHeader {
  name: string;
  description?: unknown;
  schema: Record<string, unknown>;
  row_cap?: unknown;
}

/** A valid row line, waiting for its batch. */
export interface PendingRow {
  line: number;
  key: string;
  /** The row's JSON text, as it will be stored. */
  row: string;
  created_at: string;
  updated_at: string;
}

/**
 * How deep a dump line may nest: a row keeps the 98 levels it has in `PUT …/rows/:key` (the API
 * body's limit of 100 less the `{data:{row:` envelope), under the line's own object. Deeper, the
 * row could not be stored (JSON.stringify recurses past the stack from ~4,000 levels: a 500).
 */
export const MAX_LINE_DEPTH = 99;

/** The dump's first line; anything wrong with it is 400 `invalid_body`, and nothing is made. */
export function parseHeader(text: string, line: number): DumpHeader {
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch {
    throw new AppError(
      'invalid_body',
      `line ${line}: the header is not JSON; a dump starts with {"format":"${DUMP_FORMAT_TAG}", name, slug, description, schema, row_cap}`,
    );
  }
  const tooDeep = findTooDeep(text, MAX_LINE_DEPTH);
  if (tooDeep !== null)
    throw new AppError('invalid_body', `line ${line}: the header nests deeper than ${MAX_LINE_DEPTH} levels (at ${tooDeep})`);
  if (!isPlainObject(header)) throw new AppError('invalid_body', `line ${line}: the header must be a JSON object`);
  if (header.format !== DUMP_FORMAT_TAG)
    throw new AppError(
      'invalid_body',
      `line ${line}: the header's format must be "${DUMP_FORMAT_TAG}", got ${JSON.stringify(header.format ?? null)}`,
    );
  if (typeof header.name !== 'string' || header.name.trim() === '')
    throw new AppError('invalid_body', `line ${line}: the header needs the store's name (a non-empty string)`);
  if (!isPlainObject(header.schema))
    throw new AppError('invalid_body', `line ${line}: the header needs the store's schema (a JSON Schema object)`);
  return header as unknown as DumpHeader;
}

/**
 * One row line, checked as an API write is (key, row object, row text, the schema); the
 * timestamps are kept (now when absent). A bad line gives its failure, pointing into the line.
 */
export function parseRowLine(
  text: string,
  line: number,
  now: string,
  validate: Parameters<typeof rowViolations>[0],
): PendingRow | { failure: RestoreFailure } {
  const fail = (key: string | null, errors: RestoreFailure['errors']) => ({ failure: { line, key, errors } });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return fail(null, [{ pointer: '', detail: `the line is not JSON: ${(error as Error).message}` }]);
  }
  const tooDeep = findTooDeep(text, MAX_LINE_DEPTH);
  if (tooDeep !== null) {
    const key = isPlainObject(value) && typeof value.key === 'string' ? value.key : null;
    return fail(key, [{ pointer: tooDeep, detail: `the line nests arrays and objects deeper than ${MAX_LINE_DEPTH} levels` }]);
  }
  if (!isPlainObject(value))
    return fail(null, [{ pointer: '', detail: 'a row line must be an object {key, row, created_at, updated_at}' }]);
  const key = typeof value.key === 'string' ? value.key : null;
  const problem = key === null ? 'key must be a string' : keyProblem(key);
  if (problem !== null) return fail(key, [{ pointer: '/key', detail: problem }]);
  if (!isPlainObject(value.row)) return fail(key, [{ pointer: '/row', detail: 'row must be a JSON object' }]);
  const times: string[] = [];
  for (const field of ['created_at', 'updated_at'] as const) {
    const raw = value[field];
    const time = raw === undefined ? now : typeof raw === 'string' ? canonicalTimestamp(raw) : null;
    if (time === null) return fail(key, [{ pointer: `/${field}`, detail: `${field} must be an RFC 3339 timestamp` }]);
    times.push(time);
  }
  const rowText = JSON.stringify(value.row);
  const textIssue = checkRowText(value.row, rowText);
  if (textIssue) return fail(key, [{ pointer: `/row${textIssue.pointer}`, detail: textIssue.detail }]);
  const violations = rowViolations(validate, value.row);
  if (violations.length > 0)
    return fail(
      key,
      violations.map((v) => ({ pointer: `/row${v.pointer}`, detail: v.detail })),
    );
  return { line, key: key!, row: rowText, created_at: times[0]!, updated_at: times[1]! };
}
