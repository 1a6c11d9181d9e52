import { isPlainObject } from '../../lib/json.js';
import { invalidParameter } from './filter-operand.js';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;

/**
 * One page request. `offset` and the cursors (`after`, `before`) exclude each other; with none
 * of them the list starts at its first row. Cursors stay opaque strings here: they can only be
 * checked against the list's sort, which `runListQuery` does.
 */
export interface PageParams {
  limit: number;
  offset?: number;
  after?: string;
  before?: string;
  /** `page[count]=true` adds `meta.count`, the number of rows matching the filter. */
  count: boolean;
}

const PAGE_KEYS = ['limit', 'offset', 'after', 'before', 'count'] as const;
type PageKey = (typeof PAGE_KEYS)[number];

/** Parses `page` as `qs` delivers it. */
export function parsePage(raw: unknown): PageParams {
  if (raw === undefined) return { limit: DEFAULT_PAGE_LIMIT, count: false };
  if (!isPlainObject(raw))
    throw invalidParameter('page', 'page takes page[limit], page[offset], page[after], page[before] and page[count]');
  const values: Partial<Record<PageKey, string>> = {};
  for (const [key, value] of Object.entries(raw)) {
    const parameter = `page[${key}]`;
    if (!(PAGE_KEYS as readonly string[]).includes(key)) {
      throw invalidParameter(parameter, `Unknown page parameter '${parameter}'; use ${PAGE_KEYS.map((k) => `page[${k}]`).join(', ')}`);
    }
    if (typeof value !== 'string') throw invalidParameter(parameter, `${parameter} takes a single value`);
    values[key as PageKey] = value;
  }

  const page: PageParams = { limit: DEFAULT_PAGE_LIMIT, count: false };
  if (values.limit !== undefined) {
    const limit = wholeNumber(values.limit);
    if (limit === null || limit < 1 || limit > MAX_PAGE_LIMIT) {
      throw invalidParameter('page[limit]', `page[limit] must be a whole number from 1 to ${MAX_PAGE_LIMIT}, got '${values.limit}'`);
    }
    page.limit = limit;
  }
  if (values.offset !== undefined) {
    const offset = wholeNumber(values.offset);
    if (offset === null)
      throw invalidParameter('page[offset]', `page[offset] must be a whole number of rows (0 or more), got '${values.offset}'`);
    page.offset = offset;
  }
  for (const key of ['after', 'before'] as const) {
    const cursor = values[key];
    if (cursor === undefined) continue;
    if (cursor === '') throw invalidParameter(`page[${key}]`, `page[${key}] must be a cursor from a links.next or links.prev of this list`);
    page[key] = cursor;
  }
  if (page.after !== undefined && page.before !== undefined) {
    throw invalidParameter('page[before]', 'page[after] and page[before] cannot be combined; follow one direction at a time');
  }
  if (page.offset !== undefined && (page.after !== undefined || page.before !== undefined)) {
    const cursor = page.after !== undefined ? 'page[after]' : 'page[before]';
    throw invalidParameter('page[offset]', `page[offset] cannot be combined with ${cursor}; use one way of paging`);
  }
  if (values.count !== undefined) {
    if (values.count !== 'true' && values.count !== 'false')
      throw invalidParameter('page[count]', `page[count] takes true or false, got '${values.count}'`);
    page.count = values.count === 'true';
  }
  return page;
}

function wholeNumber(text: string): number | null {
  if (!/^\d+$/.test(text)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}
