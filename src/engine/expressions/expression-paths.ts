import type { ExpressionScope } from './expression-scope.js';

/**
 * The commonest expression is a plain path: `{{ nodes.fetch.body }}`, `{{ input.id }}`,
 * `{{ trigger.body.order }}`. Evaluating one through JSONata costs an async evaluation with a
 * promise per step and a fresh environment: in the webhook benchmark the respond step's
 * `{{ nodes.shape }}` made 13% of the main thread's allocations that survived a scavenge. A path
 * of plain names over plain objects is read here instead, with JSONata's own rules for it:
 * a name reads an own property of an object (anything else gives undefined), and the path
 * stops at the first undefined. Whatever these rules do not cover goes to JSONata: an array on
 * the way or at the end (JSONata maps and flattens over arrays), quoted names, operators,
 * functions, variables, literals.
 */

/** Names only: JSONata's operators and literals that look like names are left to JSONata. */
const SIMPLE_PATH = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const RESERVED = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);

/** Parsed paths by source text (null: not a simple path); bounded like the compiled expressions. */
const CAPACITY = 1000;
const paths = new Map<string, string[] | null>();

function parsePath(source: string): string[] | null {
  let path = paths.get(source);
  if (path !== undefined) return path;
  path = SIMPLE_PATH.test(source) ? source.split('.') : null;
  if (path !== null && path.some((name) => RESERVED.has(name))) path = null;
  if (paths.size >= CAPACITY) paths.clear();
  paths.set(source, path);
  return path;
}

/** The scope as JSONata's input object sees it (see `evaluate` in expressions.ts). */
function rootValue(scope: ExpressionScope, name: string): unknown {
  switch (name) {
    case 'trigger':
      return scope.trigger;
    case 'nodes':
      return scope.nodes;
    case 'execution':
      return scope.execution;
    case 'workflow':
      return scope.workflow;
    case 'input':
      return scope.input ?? null;
    case 'item':
      return scope.item ?? null;
    case 'index':
      return scope.index ?? null;
    case 'approval':
      return scope.approval;
    default:
      return undefined;
  }
}

const hasOwn = (value: object, key: string) => Object.prototype.hasOwnProperty.call(value, key);

/**
 * `{value}` when `source` is a simple path whose result JSONata would give without mapping over
 * an array; null when JSONata must evaluate it.
 */
export function readSimplePath(source: string, scope: ExpressionScope): { value: unknown } | null {
  const path = parsePath(source);
  if (path === null) return null;
  let value = rootValue(scope, path[0]!);
  for (let i = 1; i < path.length; i++) {
    if (value === undefined) return { value: undefined };
    if (Array.isArray(value)) return null;
    value =
      value !== null && typeof value === 'object' && hasOwn(value, path[i]!) ? (value as Record<string, unknown>)[path[i]!] : undefined;
  }
  return Array.isArray(value) ? null : { value };
}
