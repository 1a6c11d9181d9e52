import type { FilterOperand } from './filter-operand.js';

/**
 * The `filter` query parameter as a typed tree. Terminology:
 * - comparison: one attribute, one operator, one coerced operand (`filter[name][eq]=x`);
 * - relation: a nested filter on a related resource (`filter[workflow][name][eq]=x`);
 * - and / or / not: combinators; several keys in one object are an implicit `and`.
 * The tree keeps attribute and relation names, not columns: `applyFilter` resolves them against
 * the same definition, so a parsed filter can be asserted on and logged without SQL in it.
 */
export const COMMON_OPERATORS = [
  'eq',
  'not_eq',
  'in',
  'greater_than',
  'greater_than_or_equal',
  'less_than',
  'less_than_or_equal',
  'is_distinct_from',
  'is_not_distinct_from',
  'is_nil',
] as const;
export const STRING_OPERATORS = ['contains', 'like', 'ilike', 'string_starts_with', 'string_ends_with'] as const;
export type FilterOperator = (typeof COMMON_OPERATORS)[number] | (typeof STRING_OPERATORS)[number];
export type ScalarOperator = Exclude<FilterOperator, 'in' | 'is_nil'>;

export type ComparisonNode =
  | { type: 'comparison'; attribute: string; operator: ScalarOperator; value: FilterOperand }
  | { type: 'comparison'; attribute: string; operator: 'in'; value: FilterOperand[] }
  | { type: 'comparison'; attribute: string; operator: 'is_nil'; value: boolean };

export type FilterNode =
  | ComparisonNode
  | { type: 'relation'; relation: string; filter: FilterNode }
  | { type: 'and'; filters: FilterNode[] }
  | { type: 'or'; filters: FilterNode[] }
  | { type: 'not'; filter: FilterNode };

/** Matches every row; what an absent `filter` parameter parses to. */
export const MATCH_ALL: FilterNode = { type: 'and', filters: [] };
