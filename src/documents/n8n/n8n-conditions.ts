import { isPlainObject } from '../../lib/json.js';
import {
  isSingleExpression,
  templateAsJsonata,
  translateJsExpression,
  type ExpressionContext,
  type Translation,
} from './n8n-expressions.js';

/**
 * n8n conditions (the IF node, Switch rules, the filter of IF 2+ and Switch 3+) as one JSONata
 * boolean expression. Every operation n8n offers on strings, numbers, booleans, dates, arrays and
 * objects has a JSONata form with the same result on values of the declared type; a condition
 * whose operand cannot be translated makes the whole condition untranslatable.
 */

const not = (x: string) => `((${x}) ? false : true)`;
const empty = (x: string) =>
  `($exists(${x}) ? (${x} = null or ${x} = "" or ($type(${x}) = "array" and $count(${x}) = 0) or ($type(${x}) = "object" and $count($keys(${x})) = 0)) : true)`;

/** An operand: `={{ x }}` becomes `x`; a template becomes a string concatenation; anything else a JSON literal. */
export function operand(value: unknown, ctx: ExpressionContext): Translation {
  if (typeof value === 'string' && value.startsWith('=')) {
    if (isSingleExpression(value)) {
      const inner = value.slice(1).trim();
      return translateJsExpression(inner.slice(2, -2), ctx);
    }
    return templateAsJsonata(value, ctx);
  }
  return { ok: true, text: JSON.stringify(value ?? null) };
}

/** A regex written as n8n takes it (`/x/i` or a bare pattern) as a JSONata regex literal. */
function regexLiteral(value: unknown): string | null {
  if (typeof value !== 'string' || value.startsWith('=')) return null;
  const match = /^\/(.*)\/([a-z]*)$/s.exec(value);
  const [pattern, flags] = match ? [match[1]!, match[2]!] : [value, ''];
  if (pattern.includes('/') && !pattern.includes('\\/')) return null;
  if (/[^im]/.test(flags)) return null;
  return `/${pattern}/${flags}`;
}

/** One comparison of the filter component (IF 2+, Switch 3+). */
function filterCondition(condition: Record<string, unknown>, caseSensitive: boolean, ctx: ExpressionContext): Translation {
  const operator = isPlainObject(condition.operator) ? condition.operator : {};
  const type = String(operator.type ?? 'string');
  const operation = String(operator.operation ?? 'equals');
  const left = operand(condition.leftValue, ctx);
  if (!left.ok) return left;
  const single = ['exists', 'notExists', 'empty', 'notEmpty', 'true', 'false'].includes(operation);
  const right = single ? { ok: true as const, text: 'null' } : operand(condition.rightValue, ctx);
  if (!right.ok) return right;
  let L = left.text;
  let R = right.text;
  if (type === 'string' && !caseSensitive) {
    L = `$lowercase(${L})`;
    R = `$lowercase(${R})`;
  }
  const text = comparison(type, operation, L, R, condition.rightValue);
  return text === null
    ? { ok: false, reason: `uses the ${type} operation "${operation}", which has no exact JSONata form` }
    : { ok: true, text };
}

function comparison(type: string, operation: string, L: string, R: string, rawRight: unknown): string | null {
  switch (operation) {
    case 'exists':
      return `$exists(${L})`;
    case 'notExists':
      return not(`$exists(${L})`);
    case 'empty':
      return empty(L);
    case 'notEmpty':
      return not(empty(L));
    case 'true':
      return `(${L} = true)`;
    case 'false':
      return `(${L} = false)`;
    case 'equals':
      return type === 'dateTime' ? `($toMillis(${L}) = $toMillis(${R}))` : `(${L} = ${R})`;
    case 'notEquals':
      return type === 'dateTime' ? not(`($toMillis(${L}) = $toMillis(${R}))`) : not(`(${L} = ${R})`);
  }
  if (type === 'string') {
    switch (operation) {
      case 'contains':
        return `$contains(${L}, ${R})`;
      case 'notContains':
        return not(`$contains(${L}, ${R})`);
      case 'startsWith':
        return `($substring(${L}, 0, $length(${R})) = ${R})`;
      case 'notStartsWith':
        return not(`($substring(${L}, 0, $length(${R})) = ${R})`);
      case 'endsWith':
        return `($length(${L}) >= $length(${R}) and $substring(${L}, $length(${L}) - $length(${R})) = ${R})`;
      case 'notEndsWith':
        return not(`($length(${L}) >= $length(${R}) and $substring(${L}, $length(${L}) - $length(${R})) = ${R})`);
      case 'regex':
      case 'notRegex': {
        const regex = regexLiteral(rawRight);
        if (regex === null) return null;
        return operation === 'regex' ? `$contains(${L}, ${regex})` : not(`$contains(${L}, ${regex})`);
      }
    }
  }
  if (type === 'number') {
    const op = { gt: '>', lt: '<', gte: '>=', lte: '<=' }[operation];
    if (op) return `(${L} ${op} ${R})`;
  }
  if (type === 'dateTime') {
    const op = { after: '>', before: '<', afterOrEquals: '>=', beforeOrEquals: '<=' }[operation];
    if (op) return `($toMillis(${L}) ${op} $toMillis(${R}))`;
  }
  if (type === 'array') {
    switch (operation) {
      case 'contains':
        return `(${R} in ${L})`;
      case 'notContains':
        return not(`(${R} in ${L})`);
      case 'lengthEquals':
        return `($count(${L}) = ${R})`;
      case 'lengthNotEquals':
        return not(`($count(${L}) = ${R})`);
      case 'lengthGt':
        return `($count(${L}) > ${R})`;
      case 'lengthLt':
        return `($count(${L}) < ${R})`;
      case 'lengthGte':
        return `($count(${L}) >= ${R})`;
      case 'lengthLte':
        return `($count(${L}) <= ${R})`;
    }
  }
  return null;
}

/** The filter parameter of IF 2+ and of each Switch 3+ rule: `{conditions: [...], combinator, options}`. */
export function translateFilter(filter: unknown, ctx: ExpressionContext): Translation {
  if (!isPlainObject(filter) || !Array.isArray(filter.conditions)) return { ok: false, reason: 'has no conditions' };
  const options = isPlainObject(filter.options) ? filter.options : {};
  const caseSensitive = options.caseSensitive !== false;
  const parts: string[] = [];
  for (const condition of filter.conditions) {
    if (!isPlainObject(condition)) return { ok: false, reason: 'has a condition that is not an object' };
    const translated = filterCondition(condition, caseSensitive, ctx);
    if (!translated.ok) return translated;
    parts.push(translated.text);
  }
  if (parts.length === 0) return { ok: true, text: 'true' };
  return { ok: true, text: parts.length === 1 ? parts[0]! : `(${parts.join(filter.combinator === 'or' ? ' or ' : ' and ')})` };
}

/** Version 1 conditions: `{string: [{value1, operation, value2}], number: […], boolean: […], dateTime: […]}`. */
export function translateLegacyConditions(conditions: unknown, combine: unknown, ctx: ExpressionContext): Translation {
  if (!isPlainObject(conditions)) return { ok: true, text: 'true' };
  const parts: string[] = [];
  for (const type of ['boolean', 'dateTime', 'number', 'string']) {
    const list = conditions[type];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return { ok: false, reason: `has ${type} conditions that are not a list` };
    for (const entry of list) {
      if (!isPlainObject(entry)) return { ok: false, reason: 'has a condition that is not an object' };
      const translated = legacyComparison(type, entry.operation, entry.value1, entry.value2, ctx);
      if (!translated.ok) return translated;
      parts.push(translated.text);
    }
  }
  if (parts.length === 0) return { ok: true, text: 'true' };
  return { ok: true, text: parts.length === 1 ? parts[0]! : `(${parts.join(combine === 'any' ? ' or ' : ' and ')})` };
}

const LEGACY_DEFAULT_OPERATION: Record<string, string> = { boolean: 'equal', dateTime: 'after', number: 'smaller', string: 'equal' };
const LEGACY_OPERATIONS: Record<string, string> = {
  equal: 'equals',
  notEqual: 'notEquals',
  smaller: 'lt',
  smallerEqual: 'lte',
  larger: 'gt',
  largerEqual: 'gte',
  isEmpty: 'empty',
  isNotEmpty: 'notEmpty',
  contains: 'contains',
  notContains: 'notContains',
  startsWith: 'startsWith',
  notStartsWith: 'notStartsWith',
  endsWith: 'endsWith',
  notEndsWith: 'notEndsWith',
  regex: 'regex',
  notRegex: 'notRegex',
  after: 'after',
  before: 'before',
};

/** One comparison of IF 1 and Switch 1-2 (`operation` in their vocabulary). */
export function legacyComparison(
  type: string,
  rawOperation: unknown,
  value1: unknown,
  value2: unknown,
  ctx: ExpressionContext,
): Translation {
  const operation = LEGACY_OPERATIONS[typeof rawOperation === 'string' ? rawOperation : (LEGACY_DEFAULT_OPERATION[type] ?? 'equal')];
  if (operation === undefined)
    return { ok: false, reason: `uses the ${type} operation "${String(rawOperation)}", which has no exact JSONata form` };
  const left = operand(value1, ctx);
  if (!left.ok) return left;
  const right = operand(value2 ?? (type === 'boolean' ? false : type === 'number' ? 0 : ''), ctx);
  if (!right.ok) return right;
  const text = comparison(type, operation, left.text, right.text, value2);
  return text === null
    ? { ok: false, reason: `uses the ${type} operation "${String(rawOperation)}", which has no exact JSONata form` }
    : { ok: true, text };
}
