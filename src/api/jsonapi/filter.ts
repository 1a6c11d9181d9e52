import { isPlainObject } from '../../lib/json.js';
import { coerceOperand, findAttribute, invalidParameter, type FilterOperand } from './filter-operand.js';
import { COMMON_OPERATORS, MATCH_ALL, STRING_OPERATORS, type ComparisonNode, type FilterNode, type ScalarOperator } from './filter-tree.js';
import type { AttributeSpec, ResourceDefinition } from './resource-definition.js';

/**
 * Guards the bind-parameter budget (SQLite allows 32,766 per statement) and keeps a single
 * request's SQL small; a longer list is better sent as several requests or a relation filter.
 */
export const MAX_IN_VALUES = 1000;

const ALL_OPERATORS: readonly string[] = [...COMMON_OPERATORS, ...STRING_OPERATORS];
const STRING_ONLY: readonly string[] = STRING_OPERATORS;

export { findAttribute, type FilterOperand } from './filter-operand.js';
export {
  COMMON_OPERATORS,
  MATCH_ALL,
  STRING_OPERATORS,
  type ComparisonNode,
  type FilterNode,
  type FilterOperator,
  type ScalarOperator,
} from './filter-tree.js';

/** Parses `filter` as `qs` delivers it (nested objects and arrays of strings). */
export function parseFilter(raw: unknown, definition: ResourceDefinition): FilterNode {
  if (raw === undefined) return MATCH_ALL;
  return parseObject(raw, definition, 'filter');
}

function parseObject(raw: unknown, definition: ResourceDefinition, path: string): FilterNode {
  if (!isPlainObject(raw)) {
    throw invalidParameter(path, `${path} must be a filter object, e.g. ${path}[name][eq]=value`);
  }
  const filters = Object.entries(raw).map(([key, value]) => parseEntry(key, value, definition, `${path}[${key}]`));
  return filters.length === 1 ? filters[0]! : { type: 'and', filters };
}

function parseEntry(key: string, value: unknown, definition: ResourceDefinition, path: string): FilterNode {
  if (key === 'and' || key === 'or') {
    const items = asList(value);
    if (items === null || items.length === 0) {
      throw invalidParameter(path, `${path} takes a list of filters, e.g. ${path}[0][name][eq]=value`);
    }
    return { type: key, filters: items.map((item, index) => parseObject(item, definition, `${path}[${index}]`)) };
  }
  if (key === 'not') {
    if (!isPlainObject(value) || asList(value) !== null) {
      throw invalidParameter(path, `${path} takes one filter object, e.g. ${path}[name][eq]=value`);
    }
    return { type: 'not', filter: parseObject(value, definition, path) };
  }
  const spec = findAttribute(definition, key);
  if (spec && spec.filterable !== false) return parseAttribute(key, spec, value, path);
  const relation =
    definition.relationFilters && Object.hasOwn(definition.relationFilters, key) ? definition.relationFilters[key] : undefined;
  if (relation) return { type: 'relation', relation: key, filter: parseObject(value, relation.resource(), path) };
  throw invalidParameter(path, definition.filterHint?.(key) ?? `'${key}' is not a filterable attribute or relation of ${definition.type}`);
}

function parseAttribute(attribute: string, spec: AttributeSpec, value: unknown, path: string): FilterNode {
  // `filter[name]=x` is shorthand for `filter[name][eq]=x`.
  if (typeof value === 'string') return parseComparison(attribute, spec, 'eq', value, path);
  if (!isPlainObject(value) || asList(value) !== null || Object.keys(value).length === 0) {
    throw invalidParameter(
      path,
      `${path} takes a value or an operator, e.g. ${path}[eq]=value; for several values use ${path}[in][]=a&${path}[in][]=b`,
    );
  }
  const comparisons = Object.entries(value).map(([operator, operand]) =>
    parseComparison(attribute, spec, operator, operand, `${path}[${operator}]`),
  );
  return comparisons.length === 1 ? comparisons[0]! : { type: 'and', filters: comparisons };
}

function parseComparison(attribute: string, spec: AttributeSpec, operator: string, raw: unknown, path: string): ComparisonNode {
  if (!ALL_OPERATORS.includes(operator)) {
    const allowed = spec.kind === 'string' ? ALL_OPERATORS : COMMON_OPERATORS;
    throw invalidParameter(path, `Unknown filter operator '${operator}'; ${spec.kind} attributes take ${allowed.join(', ')}`);
  }
  if (STRING_ONLY.includes(operator) && spec.kind !== 'string') {
    throw invalidParameter(path, `Operator '${operator}' applies to string attributes only; '${attribute}' is ${spec.kind}`);
  }
  if (operator === 'in') return { type: 'comparison', attribute, operator, value: parseList(spec, raw, path) };
  if (typeof raw !== 'string') throw invalidParameter(path, `${path} takes a single value`);
  if (operator === 'is_nil') {
    if (raw !== 'true' && raw !== 'false') throw invalidParameter(path, `is_nil takes true or false, got '${raw}'`);
    return { type: 'comparison', attribute, operator, value: raw === 'true' };
  }
  if ((operator === 'like' || operator === 'ilike') && endsWithOpenEscape(raw)) {
    // PostgreSQL rejects such a pattern with an error and SQLite silently matches nothing.
    throw invalidParameter(path, `The pattern ends with an unpaired escape character '\\'; write '\\\\' for a literal backslash`);
  }
  return { type: 'comparison', attribute, operator: operator as ScalarOperator, value: coerceOperand(raw, spec, path) };
}

/** `in` accepts `[in][]=a&[in][]=b` (an array) or `[in]=a,b`; an empty `[in]=` is an empty list. */
function parseList(spec: AttributeSpec, raw: unknown, path: string): FilterOperand[] {
  const items = typeof raw === 'string' ? (raw === '' ? [] : raw.split(',')) : asList(raw);
  if (items === null || items.some((item) => typeof item !== 'string')) {
    throw invalidParameter(path, `${path} takes a list of values: ${path}[]=a&${path}[]=b or ${path}=a,b`);
  }
  if (items.length > MAX_IN_VALUES) throw invalidParameter(path, `${path} takes at most ${MAX_IN_VALUES} values`);
  return (items as string[]).map((item) => coerceOperand(item, spec, path));
}

/**
 * qs delivers `[0]=…&[1]=…` as an array, but past its `arrayLimit` (100) as an object keyed by
 * the indices; both are lists here. Anything else is not a list (null).
 */
function asList(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (!isPlainObject(value)) return null;
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((key) => /^\d+$/.test(key))) return null;
  return keys.sort((a, b) => Number(a) - Number(b)).map((key) => value[key]);
}

function endsWithOpenEscape(pattern: string): boolean {
  let trailing = 0;
  for (let i = pattern.length - 1; i >= 0 && pattern[i] === '\\'; i--) trailing++;
  return trailing % 2 === 1;
}
