import { sql, type SelectQueryBuilder } from 'kysely';
import { findAttribute, invalidParameter } from './filter-operand.js';
import { reference } from './filter-sql.js';
import { columnOf, type AttributeKind, type ResourceDefinition } from './resource-definition.js';

export type SortDirection = 'asc' | 'desc';

export interface SortKey {
  attribute: string;
  column: string;
  direction: SortDirection;
  kind: AttributeKind;
  /** Allowed values of an enum key (cursor values are checked against them). */
  values?: readonly string[];
  /** A nullable key sorts NULLs as larger than any value and rules out keyset cursors. */
  nullable: boolean;
}

/**
 * Parses JSON:API `sort=-created_at,name` (absent: the definition's `defaultSort`). `id` always
 * ends the list as a tie-breaker, in the first key's direction, so every order is total and
 * stable across pages; `sort=-created_at` therefore means `-created_at,-id`.
 */
export function parseSort(raw: unknown, definition: ResourceDefinition): SortKey[] {
  if (raw !== undefined && typeof raw !== 'string') {
    throw invalidParameter('sort', 'sort takes one comma-separated list, e.g. sort=-created_at,name');
  }
  const text = raw ?? definition.defaultSort;
  const keys: SortKey[] = [];
  for (const field of text.split(',')) {
    const direction: SortDirection = field.startsWith('-') ? 'desc' : 'asc';
    const attribute = direction === 'desc' ? field.slice(1) : field;
    if (attribute === '') throw invalidParameter('sort', `sort has an empty field in '${text}'`);
    const spec = findAttribute(definition, attribute);
    if (!spec) throw invalidParameter('sort', `'${attribute}' is not an attribute of ${definition.type}`);
    if (!(spec.sortable ?? spec.kind !== 'object')) throw invalidParameter('sort', `${definition.type} cannot be sorted by '${attribute}'`);
    if (keys.some((key) => key.attribute === attribute)) throw invalidParameter('sort', `sort names '${attribute}' more than once`);
    keys.push({
      attribute,
      column: columnOf(definition, attribute),
      direction,
      kind: spec.kind,
      ...(spec.values ? { values: spec.values } : {}),
      nullable: spec.nullable === true,
    });
  }
  if (!keys.some((key) => key.attribute === 'id')) {
    keys.push({ attribute: 'id', column: columnOf(definition, 'id'), direction: keys[0]!.direction, kind: 'uuid', nullable: false });
  }
  return keys;
}

/** The canonical sort string (`-created_at,-id`); cursors carry it to recognise their list. */
export function formatSort(sort: readonly SortKey[]): string {
  return sort.map((key) => (key.direction === 'desc' ? `-${key.attribute}` : key.attribute)).join(',');
}

/** The same keys in the opposite order, for walking backwards from a `page[before]` cursor. */
export function reverseSort(sort: readonly SortKey[]): SortKey[] {
  return sort.map((key) => ({ ...key, direction: key.direction === 'asc' ? 'desc' : 'asc' }));
}

/**
 * NULL placement is spelled out because the dialects disagree by default (PostgreSQL puts NULLs
 * last when ascending, SQLite first); PostgreSQL's choice, NULL as the largest value, is kept.
 */
export function applySort<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  sort: readonly SortKey[],
  tableAlias?: string,
): SelectQueryBuilder<DB, TB, O> {
  return sort.reduce((ordered, key) => {
    const column = reference(tableAlias, key.column);
    if (!key.nullable) return ordered.orderBy(key.direction === 'asc' ? sql`${column} ASC` : sql`${column} DESC`);
    return ordered.orderBy(key.direction === 'asc' ? sql`${column} ASC NULLS LAST` : sql`${column} DESC NULLS FIRST`);
  }, query);
}
