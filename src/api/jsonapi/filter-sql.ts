import { sql, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { SqlDialect } from '../../db/dialect/dialect.js';
import { findAttribute, type FilterOperand } from './filter-operand.js';
import type { ComparisonNode, FilterNode } from './filter-tree.js';
import { columnOf, type AttributeKind, type ResourceDefinition } from './resource-definition.js';

/** The tenant column and value every relation sub-select is restricted to. */
export interface FilterScope {
  column: string;
  value: string;
}

export interface FilterSqlOptions {
  /**
   * Applied to every relation sub-select, so `filter[workflow][name]=x` can never reach a row of
   * another workspace. `null` only for resources read globally (which have no relations).
   */
  scope: FilterScope | null;
  /** Qualifies the list's own columns when the base query aliases or joins its table. */
  tableAlias?: string;
}

interface Context {
  dialect: SqlDialect;
  scope: FilterScope | null;
  alias: string | undefined;
  depth: number;
}

const TRUE = sql<SqlBool>`1 = 1`;
const FALSE = sql<SqlBool>`1 = 0`;

/**
 * Adds the filter to the WHERE clause. Semantics are SQL's and the same on both dialects:
 * - a comparison with NULL is NULL, so `eq`, `not_eq`, `in`, `greater_than`… never match a NULL
 *   column; `is_distinct_from`, `is_not_distinct_from` and `is_nil` are the NULL-aware ones;
 * - `not` is SQL's NOT, and NOT NULL is NULL: `filter[not][nickname][eq]=x` does not match rows
 *   whose nickname is NULL (add `or` with `is_nil` to include them);
 * - `like` is case-sensitive with the caller's `%` and `_`; `ilike` compares `dialect.lower` of
 *   both sides; both escape with `\`;
 * - `contains`, `string_starts_with` and `string_ends_with` match the operand literally;
 * - an empty `in` list matches nothing.
 */
export function applyFilter<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  node: FilterNode,
  definition: ResourceDefinition,
  dialect: SqlDialect,
  options: FilterSqlOptions,
): SelectQueryBuilder<DB, TB, O> {
  const condition = filterCondition(node, definition, dialect, options);
  return condition ? query.where(condition) : query;
}

/** The filter as one boolean SQL expression, or null when it matches every row. */
export function filterCondition(
  node: FilterNode,
  definition: ResourceDefinition,
  dialect: SqlDialect,
  options: FilterSqlOptions,
): RawBuilder<SqlBool> | null {
  if (node.type === 'and' && node.filters.length === 0) return null;
  return compile(node, definition, { dialect, scope: options.scope, alias: options.tableAlias, depth: 0 });
}

function compile(node: FilterNode, definition: ResourceDefinition, context: Context): RawBuilder<SqlBool> {
  switch (node.type) {
    case 'and':
      return node.filters.length === 0
        ? TRUE
        : sql<SqlBool>`(${sql.join(
            node.filters.map((f) => compile(f, definition, context)),
            sql` AND `,
          )})`;
    case 'or':
      return node.filters.length === 0
        ? FALSE
        : sql<SqlBool>`(${sql.join(
            node.filters.map((f) => compile(f, definition, context)),
            sql` OR `,
          )})`;
    case 'not':
      return sql<SqlBool>`NOT (${compile(node.filter, definition, context)})`;
    case 'relation':
      return compileRelation(node.relation, node.filter, definition, context);
    case 'comparison':
      return compileComparison(node, definition, context);
  }
}

/** `local_column IN (SELECT id FROM related WHERE scope AND sub-filter)`. */
function compileRelation(relation: string, filter: FilterNode, definition: ResourceDefinition, context: Context): RawBuilder<SqlBool> {
  const spec = definition.relationFilters?.[relation];
  if (!spec) throw new Error(`${definition.type} has no relation filter '${relation}'`);
  if (!context.scope) throw new Error(`relation filter '${relation}' needs a scope: refusing an unscoped sub-select`);
  const related = spec.resource();
  // One alias per nesting level keeps the sub-select's columns apart from the outer ones,
  // including when a resource relates to its own table.
  const alias = `rf${context.depth}`;
  const inner = compile(filter, related, { ...context, alias, depth: context.depth + 1 });
  return sql<SqlBool>`${reference(context.alias, spec.localColumn)} IN (SELECT ${sql.id(alias, 'id')} FROM ${sql.id(related.table)} AS ${sql.id(alias)} WHERE ${sql.id(alias, context.scope.column)} = ${context.scope.value} AND ${inner})`;
}

function compileComparison(node: ComparisonNode, definition: ResourceDefinition, context: Context): RawBuilder<SqlBool> {
  const spec = findAttribute(definition, node.attribute);
  if (!spec) throw new Error(`${definition.type} has no attribute '${node.attribute}'`);
  const column = spec.expression ? spec.expression(context.alias) : reference(context.alias, columnOf(definition, node.attribute));
  const { dialect } = context;
  if (node.operator === 'is_nil') return node.value ? sql<SqlBool>`${column} IS NULL` : sql<SqlBool>`${column} IS NOT NULL`;
  if (node.operator === 'in') {
    if (node.value.length === 0) return FALSE;
    return sql<SqlBool>`${column} IN (${sql.join(node.value.map((value) => bind(value, spec.kind, dialect)))})`;
  }
  const value = bind(node.value, spec.kind, dialect);
  switch (node.operator) {
    case 'eq':
      return sql<SqlBool>`${column} = ${value}`;
    case 'not_eq':
      return sql<SqlBool>`${column} <> ${value}`;
    case 'greater_than':
      return sql<SqlBool>`${column} > ${value}`;
    case 'greater_than_or_equal':
      return sql<SqlBool>`${column} >= ${value}`;
    case 'less_than':
      return sql<SqlBool>`${column} < ${value}`;
    case 'less_than_or_equal':
      return sql<SqlBool>`${column} <= ${value}`;
    case 'is_distinct_from':
      return dialect.distinctFrom(column, value, false);
    case 'is_not_distinct_from':
      return dialect.distinctFrom(column, value, true);
    case 'like':
      return like(column, sql`${value}`);
    case 'ilike':
      // The cast pins lower(text): PostgreSQL 14+ also has lower(anyrange) for an untyped parameter.
      return like(dialect.lower(column), dialect.lower(sql`CAST(${value} AS TEXT)`));
    case 'contains':
      return like(column, sql`${`%${escapeLike(String(value))}%`}`);
    case 'string_starts_with':
      return like(column, sql`${`${escapeLike(String(value))}%`}`);
    case 'string_ends_with':
      return like(column, sql`${`%${escapeLike(String(value))}`}`);
  }
}

// The escape character is spelled out on both dialects: PostgreSQL defaults to `\` and SQLite
// to none, so without ESCAPE the same pattern would mean different things.
function like(left: RawBuilder<unknown>, pattern: RawBuilder<unknown>): RawBuilder<SqlBool> {
  return sql<SqlBool>`${left} LIKE ${pattern} ESCAPE '\\'`;
}

/** Makes `%`, `_` and `\` literal in a LIKE pattern that uses `\` as its escape. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/**
 * Encodes an operand for its column. Integer operands are cast to BIGINT because PostgreSQL
 * would type the parameter as the column's `integer` and fail on any value beyond 32 bits
 * (a 500 where SQLite simply compares); int4-vs-int8 comparisons still use the index.
 */
export function bind(value: FilterOperand, kind: AttributeKind, dialect: SqlDialect): unknown {
  if (kind === 'boolean' && typeof value === 'boolean') return dialect.bool(value);
  if (kind === 'integer') return sql`CAST(${value} AS BIGINT)`;
  return value;
}

export function reference(alias: string | undefined, column: string): RawBuilder<unknown> {
  return alias ? sql.id(alias, column) : sql.id(column);
}
