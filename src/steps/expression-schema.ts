/**
 * Config values may hold JSONata expressions written as `{{ … }}`. Any string field accepts
 * them as they are (an expression inside a longer string is interpolated at run time). A field
 * of another type accepts a string only when it is exactly one expression, because only then
 * does the result keep its own type (`"{{ trigger.body.status }}"` can yield 404).
 */

/**
 * One `{{ … }}` with nothing but whitespace around it and no second `{{` inside. The inner
 * text may contain `}}` so JSONata object constructors (`{{ {"a": {"b": 1}} }}`) still count
 * as a single expression; a blank `{{ }}` does not.
 */
export const WHOLE_EXPRESSION_PATTERN = '^\\s*\\{\\{(?!\\s*\\}\\})(?:(?!\\{\\{)[\\s\\S])*\\}\\}\\s*$';

const wholeExpression = new RegExp(WHOLE_EXPRESSION_PATTERN, 'u');

export function isWholeExpression(value: unknown): value is string {
  return typeof value === 'string' && wholeExpression.test(value);
}

export const expressionSchema = {
  type: 'string',
  pattern: WHOLE_EXPRESSION_PATTERN,
  description: 'A single JSONata expression in {{ … }}.',
} as const;

/** `schema`, or a string holding exactly one expression that yields such a value at run time. */
export function orExpression(schema: Record<string, unknown>): Record<string, unknown> {
  return { anyOf: [schema, expressionSchema] };
}

/** An object whose values are strings (each may hold expressions), as headers and query are. */
export const stringMapSchema = {
  type: 'object',
  additionalProperties: { type: 'string' },
} as const;
