import { sql, type SelectQueryBuilder } from 'kysely';
import type { SqlDialect } from '../../db/dialect/dialect.js';
import { decodeCursor, encodeCursor, isKeysetSort, keysetCondition } from './cursor.js';
import { applyFilter, type FilterScope } from './filter-sql.js';
import { MATCH_ALL, type FilterNode } from './filter.js';
import type { PageParams } from './page.js';
import type { ResourceDefinition } from './resource-definition.js';
import { applySort, reverseSort, type SortKey } from './sort.js';

export interface ListLinks {
  next?: string;
  prev?: string;
}

export interface ListResult<Row> {
  rows: Row[];
  links: ListLinks;
  meta?: { count: number };
}

export interface ListQueryOptions<DB, TB extends keyof DB, Row> {
  /** Already scoped to the workspace; must select `id` and every sort column, and not order. */
  base: SelectQueryBuilder<DB, TB, Row>;
  definition: ResourceDefinition;
  dialect: SqlDialect;
  /** null: no filter. */
  filter: FilterNode | null;
  sort: SortKey[];
  page: PageParams;
  /**
   * Restricts relation sub-selects; see FilterSqlOptions.scope. Absent or null only for global
   * resources: a relation filter without a scope throws rather than reach other workspaces.
   */
  scope?: FilterScope | null;
  /** Builds a link to this list with `page[...]` replaced by these parameters (others kept). */
  buildLink: (pageParams: Record<string, string>) => string;
  tableAlias?: string;
}

/**
 * Runs one page of a list: filter, sort, then offset or keyset, fetching `limit + 1` rows so
 * the extra row tells whether another page follows without a count.
 *
 * Links: an offset request (or any request on a sort with a nullable key) gets offset links;
 * otherwise pages link by cursor, the first page included, so a client walking `links.next`
 * neither skips nor repeats rows when rows are inserted or deleted meanwhile.
 * - offset: `next` when more rows follow, `prev` when offset > 0;
 * - `page[after]`: `next` when more rows follow, `prev` (before the first row) always;
 * - `page[before]`: `prev` when more rows precede, `next` (after the last row) always.
 * An empty cursor page has no row to point from: after a `page[before]` it links `next` to the
 * first page (nothing precedes the cursor, so that is where the rows resume); after a
 * `page[after]` it has no `prev`.
 */
export async function runListQuery<DB, TB extends keyof DB, Row>(options: ListQueryOptions<DB, TB, Row>): Promise<ListResult<Row>> {
  const { definition, dialect, sort, page, tableAlias } = options;
  const filtered = applyFilter(options.base, options.filter ?? MATCH_ALL, definition, dialect, {
    scope: options.scope ?? null,
    ...(tableAlias ? { tableAlias } : {}),
  });
  const common: Record<string, string> = { 'page[limit]': String(page.limit), ...(page.count ? { 'page[count]': 'true' } : {}) };
  const link = (params: Record<string, string>) => options.buildLink({ ...params, ...common });
  const cursorOf = (row: Row | undefined) => encodeCursor(definition.type, sort, row as Record<string, unknown>);

  const result: ListResult<Row> = { rows: [], links: {} };
  if (page.after !== undefined || page.before !== undefined) {
    const forward = page.after !== undefined;
    const parameter = forward ? 'page[after]' : 'page[before]';
    const values = decodeCursor((page.after ?? page.before)!, definition.type, sort, parameter);
    const walk = forward ? sort : reverseSort(sort);
    const fetched = await applySort(filtered.where(keysetCondition(walk, values, dialect, tableAlias)), walk, tableAlias)
      .limit(page.limit + 1)
      .execute();
    const more = fetched.length > page.limit;
    const rows = fetched.slice(0, page.limit);
    result.rows = forward ? rows : rows.reverse();
    const first = result.rows[0];
    const last = result.rows.at(-1);
    if (forward) {
      if (more) result.links.next = link({ 'page[after]': cursorOf(last) });
      if (first) result.links.prev = link({ 'page[before]': cursorOf(first) });
    } else {
      if (more) result.links.prev = link({ 'page[before]': cursorOf(first) });
      result.links.next = last ? link({ 'page[after]': cursorOf(last) }) : link({});
    }
  } else {
    const offset = page.offset ?? 0;
    const fetched = await applySort(filtered, sort, tableAlias)
      .limit(page.limit + 1)
      .offset(offset)
      .execute();
    const more = fetched.length > page.limit;
    result.rows = fetched.slice(0, page.limit);
    if (page.offset === undefined && isKeysetSort(sort)) {
      if (more) result.links.next = link({ 'page[after]': cursorOf(result.rows.at(-1)) });
    } else {
      if (more) result.links.next = link({ 'page[offset]': String(offset + page.limit) });
      if (offset > 0) result.links.prev = link({ 'page[offset]': String(Math.max(0, offset - page.limit)) });
    }
  }
  if (page.count) result.meta = { count: await countRows(filtered) };
  return result;
}

/** Counts the filtered rows; the base's selection is replaced, so it must not group or DISTINCT. */
async function countRows<DB, TB extends keyof DB, Row>(query: SelectQueryBuilder<DB, TB, Row>): Promise<number> {
  const row = await query
    .clearSelect()
    .select(sql<number | string | bigint>`count(*)`.as('count'))
    .executeTakeFirst();
  // PostgreSQL answers count(*) as bigint, which pg returns as a string.
  return Number((row as { count?: unknown } | undefined)?.count ?? 0);
}
