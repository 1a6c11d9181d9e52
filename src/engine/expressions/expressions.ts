import jsonata from 'jsonata';
import { isPlainObject } from '../../lib/json.js';
import { isWholeExpression } from '../../steps/expression-schema.js';
import { NonRetriableError } from '../step-errors.js';
import { readSimplePath } from './expression-paths.js';
import type { ExpressionScope } from './expression-scope.js';

export type { ExpressionScope } from './expression-scope.js';

/**
 * Guardrails for untrusted expressions (JSONata can recurse without end). jsonata 2.2 checks
 * them on every evaluation step with state kept per evaluation, so one compiled expression is
 * safely shared by concurrent runs (a hook set with `assign` would be shared state). 1000 ms
 * and a depth of 500 are the limits JSONata's own test suite uses for runaway expressions; a
 * depth of 500 still leaves room for ~120 levels of non-tail recursion, and tail calls do not
 * grow it.
 */
export const EXPRESSION_LIMITS = Object.freeze({ timeoutMs: 1000, maxDepth: 500 });

/** Compiled expressions by source text. Graphs reuse few distinct texts; 1000 bounds memory. */
const CACHE_CAPACITY = 1000;
const compiled = new Map<string, jsonata.Expression>();

const TIMEOUT_CODES = new Set(['D1011', 'D1012']);
/** Long expressions are cut in messages; `details.expression` keeps the full text. */
const MESSAGE_EXPRESSION_CHARS = 200;

interface Where {
  nodeId?: string;
  /** `config.body`, `config.cases[0].equals`. */
  field?: string;
}

/**
 * Evaluates every expression in a node's config. Returns the config with each expression
 * replaced by its value: parts that hold no expression (most configs hold none) are the
 * config's own objects, not copies, so the result is read-only like the config (plan configs
 * are frozen: graph-plan.ts). Throws `NonRetriableError` (`expression_error` or
 * `expression_timeout`) naming the node and the field.
 */
export async function resolveConfig(
  config: Record<string, unknown>,
  scope: ExpressionScope,
  where: { nodeId: string },
): Promise<Record<string, unknown>> {
  if (!holdsExpression(config)) return config;
  return (await resolveValue(config, scope, { nodeId: where.nodeId, field: 'config' })) as Record<string, unknown>;
}

/** Whether frozen config objects hold a `{{` anywhere: they never change, so they are scanned once. */
const scanned = new WeakMap<object, boolean>();

/**
 * Whether `value` holds a string with `{{` at any depth. Walking a config to copy it, an async
 * call and a field path per value, cost ~6 KB of garbage per delivery in the webhook
 * benchmark (three nodes, one expression); the scan allocates nothing.
 */
function holdsExpression(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('{{');
  if (typeof value !== 'object' || value === null) return false;
  const known = scanned.get(value);
  if (known !== undefined) return known;
  let found = false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && !found; i++) found = holdsExpression(value[i]);
  } else {
    for (const key in value) {
      if (Object.hasOwn(value, key) && holdsExpression((value as Record<string, unknown>)[key])) {
        found = true;
        break;
      }
    }
  }
  if (Object.isFrozen(value)) scanned.set(value, found);
  return found;
}

/**
 * Evaluates one bare expression (`if` conditions, `switch` values, `loop` items), written with
 * or without `{{ }}` around it. An undefined result is null.
 */
export async function evaluateExpression(text: string, scope: ExpressionScope, where: Where = {}): Promise<unknown> {
  const source = isWholeExpression(text) ? innerText(text) : text;
  return toJson(await evaluate(source, scope, where));
}

/** `value` holds an expression (callers check first, so the way to one is all that is walked). */
async function resolveValue(value: unknown, scope: ExpressionScope, where: Required<Where>): Promise<unknown> {
  if (typeof value === 'string') return resolveString(value, scope, where);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const element: unknown = value[i];
      out.push(
        holdsExpression(element) ? await resolveValue(element, scope, { nodeId: where.nodeId, field: `${where.field}[${i}]` }) : element,
      );
    }
    return out;
  }
  if (isPlainObject(value)) {
    const entries: [string, unknown][] = [];
    // Only the way to an expression pays for an async call and a field path.
    for (const [key, child] of Object.entries(value))
      entries.push([
        key,
        holdsExpression(child) ? await resolveValue(child, scope, { nodeId: where.nodeId, field: `${where.field}.${key}` }) : child,
      ]);
    // fromEntries defines own properties, so a "__proto__" key stays a key (assignment would set the prototype).
    return Object.fromEntries(entries);
  }
  return value;
}

async function resolveString(text: string, scope: ExpressionScope, where: Required<Where>): Promise<unknown> {
  // Most config strings (URLs, names, code) hold no expression: skip the scan and JSONata.
  if (!text.includes('{{')) return text;
  // Only a string that is exactly one expression keeps the result's type.
  if (isWholeExpression(text)) return toJson(await evaluate(innerText(text), scope, where));
  let out = '';
  for (const part of splitTemplate(text)) {
    out += typeof part === 'string' ? part : interpolate(toJson(await evaluate(part.expression, scope, where)));
  }
  return out;
}

/** `"  {{ a.b }} "` -> `"a.b"`; the caller has checked it is one whole expression. */
function innerText(text: string): string {
  const trimmed = text.trim();
  return trimmed.slice(2, -2).trim();
}

type TemplatePart = string | { expression: string };

/** `"Order {{ id }}!"` -> `["Order ", {expression: "id"}, "!"]`; an unclosed `{{` stays text. */
function splitTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literalStart = 0;
  let open = text.indexOf('{{');
  while (open !== -1) {
    const close = findClose(text, open + 2);
    if (close === -1) break;
    const expression = text.slice(open + 2, close).trim();
    // A blank `{{ }}` is not an expression (as in the config schema): it stays text.
    if (expression !== '') {
      if (open > literalStart) parts.push(text.slice(literalStart, open));
      parts.push({ expression });
      literalStart = close + 2;
    }
    open = text.indexOf('{{', close + 2);
  }
  if (literalStart < text.length) parts.push(text.slice(literalStart));
  return parts;
}

/**
 * Where the `}}` closing an expression starts. Braces of JSONata object constructors and
 * braces inside string literals do not close it, so `{{ {"a": {"b": 1}} }}` is one
 * expression. When the scan finds no balanced close (a stray quote), the first `}}` is taken
 * and JSONata reports what is wrong with the text.
 */
function findClose(text: string, from: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote !== null) {
      if (c === '\\' && quote !== '`') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') {
      quote = c;
    } else if (c === '{') {
      depth++;
    } else if (c === '}') {
      if (depth === 0 && text[i + 1] === '}') return i;
      if (depth > 0) depth--;
    }
  }
  return text.indexOf('}}', from);
}

function interpolate(value: unknown): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

async function evaluate(source: string, scope: ExpressionScope, where: Where): Promise<unknown> {
  const read = readSimplePath(source, scope);
  if (read !== null) return read.value;
  let expression: jsonata.Expression;
  try {
    expression = compile(source);
  } catch (error) {
    throw expressionError(source, where, error);
  }
  const bindings: Record<string, unknown> = {
    trigger: scope.trigger,
    nodes: scope.nodes,
    execution: scope.execution,
    workflow: scope.workflow,
    input: scope.input ?? null,
    item: scope.item ?? null,
    index: scope.index ?? null,
  };
  if (scope.approval !== undefined) bindings.approval = scope.approval;
  try {
    return await expression.evaluate(bindings, bindings);
  } catch (error) {
    throw expressionError(source, where, error);
  }
}

function compile(source: string): jsonata.Expression {
  const hit = compiled.get(source);
  if (hit !== undefined) {
    // Re-inserting keeps the map in least-recently-used order for eviction.
    compiled.delete(source);
    compiled.set(source, hit);
    return hit;
  }
  const expression = jsonata(source, { timeout: EXPRESSION_LIMITS.timeoutMs, stack: EXPRESSION_LIMITS.maxDepth });
  if (compiled.size >= CACHE_CAPACITY) compiled.delete(compiled.keys().next().value as string);
  compiled.set(source, expression);
  return expression;
}

/** How many compiled expressions are cached (for tests of the bound). */
export function compiledExpressionCount(): number {
  return compiled.size;
}

function expressionError(source: string, where: Where, error: unknown): NonRetriableError {
  // JSONata throws plain objects `{code, message, position, token}`, not Error instances.
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown };
  const cause = typeof message === 'string' ? message : String(error);
  const shown = source.length > MESSAGE_EXPRESSION_CHARS ? `${source.slice(0, MESSAGE_EXPRESSION_CHARS)}…` : source;
  const prefix = [where.nodeId === undefined ? null : `node "${where.nodeId}"`, where.field ?? null].filter((p) => p !== null).join(': ');
  const subject = `${prefix === '' ? '' : `${prefix}: `}expression {{ ${shown} }}`;
  const details: Record<string, unknown> = {};
  if (where.nodeId !== undefined) details.node_id = where.nodeId;
  if (where.field !== undefined) details.field = where.field;
  details.expression = source;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
    const limit =
      code === 'D1012' ? `ran longer than ${EXPRESSION_LIMITS.timeoutMs} ms` : `nested deeper than ${EXPRESSION_LIMITS.maxDepth} levels`;
    return new NonRetriableError(`${subject} ${limit} and was stopped (a runaway loop or recursion?)`, {
      code: 'expression_timeout',
      details,
    });
  }
  return new NonRetriableError(`${subject} failed: ${cause}`, { code: 'expression_error', details });
}

/**
 * JSONata results as plain JSON: its sequences are arrays carrying extra flags (which break
 * deep equality), functions have no JSON form, and a copy keeps a later mutation of the value
 * from reaching the node output it was read from. Undefined (no match) becomes null.
 */
export function toJson(value: unknown): unknown {
  if (value === undefined || typeof value === 'function') return null;
  if (Array.isArray(value)) return value.map((element) => toJson(element));
  if (isPlainObject(value)) {
    const entries = Object.entries(value).filter(([, child]) => child !== undefined && typeof child !== 'function');
    return Object.fromEntries(entries.map(([key, child]) => [key, toJson(child)]));
  }
  return value;
}
