import { isPlainObject } from '../../lib/json.js';
import type { MapResult, NodeContext } from './map-context.js';
import { operand } from './n8n-conditions.js';

interface Field {
  name: string;
  value: unknown;
  type: string;
}

/**
 * Set / Edit Fields, every version: v1-2 `values.{string,number,boolean}`, v3.0-3.2
 * `fields.values` (`stringValue`, `numberValue`, …), v3.3+ `assignments.assignments`, and the
 * raw JSON mode. Dotted names build nested objects (unless dot notation is off). When n8n keeps
 * the input's other fields (v1-2 by default, `include: all` or `includeOtherFields`), the
 * values become one JSONata expression that merges them into the input, nesting included.
 */
export function mapSet(ctx: NodeContext): MapResult {
  const version = ctx.node.typeVersion ?? 1;
  const options = isPlainObject(ctx.param('options')) ? (ctx.param('options') as Record<string, unknown>) : {};
  if (version >= 3 && ctx.param('mode', 'manual') === 'raw') return rawMode(ctx, version);
  const fields = version >= 3.3 ? assignments(ctx) : version >= 3 ? fieldValues(ctx) : legacyValues(ctx);
  const include =
    version >= 3.3
      ? ctx.param('includeOtherFields') === true
        ? 'all'
        : 'none'
      : version >= 3
        ? String(ctx.param('include', 'all'))
        : ctx.param('keepOnlySet') === true
          ? 'none'
          : 'all';
  if (include === 'selected' || include === 'except')
    return { placeholder: `keeping ${include} input fields has no exact Switchyard form` };
  const dotted = options.dotNotation !== false;
  for (const field of fields) {
    if (dotted && /\[\d+\]/.test(field.name))
      return { placeholder: `the field "${field.name}" sets an array element, which a set step cannot` };
  }
  if (include === 'none') {
    const values: Record<string, unknown> = {};
    for (const field of fields) {
      const path = dotted ? field.name.split('.') : [field.name];
      setPath(values, path, ctx.translate(typed(field), `/values/${path.map(escape).join('/')}`));
    }
    return { type: 'set', config: { values }, notes: [...ctx.notes] };
  }
  // Merged into the input: one expression, so every value is JSONata.
  const tree: Tree = new Map();
  for (const field of fields) {
    const translated = operand(typed(field), ctx.expressions);
    if (!translated.ok) return { placeholder: `the value of "${field.name}" ${translated.reason}` };
    insert(tree, dotted ? field.name.split('.') : [field.name], translated.text);
  }
  return { type: 'set', config: { values: `{{ ${merged('input', tree)} }}` }, notes: [...ctx.notes] };
}

function rawMode(ctx: NodeContext, version: number): MapResult {
  const json = ctx.param('jsonOutput', '{}');
  const keep = version >= 3.3 ? ctx.param('includeOtherFields') === true : ctx.param('include', 'all') === 'all';
  if (typeof json !== 'string' || json.startsWith('=')) return { placeholder: 'the raw JSON is built by an expression' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { placeholder: 'the raw JSON is not valid JSON' };
  }
  if (!isPlainObject(parsed)) return { placeholder: 'the raw JSON is not an object' };
  return { type: 'set', config: { values: keep ? `{{ $merge([input, ${JSON.stringify(parsed)}]) }}` : parsed } };
}

function assignments(ctx: NodeContext): Field[] {
  const raw = ctx.param('assignments');
  const list = isPlainObject(raw) && Array.isArray(raw.assignments) ? raw.assignments : [];
  return list
    .filter(isPlainObject)
    .filter((a) => typeof a.name === 'string')
    .map((a) => ({ name: a.name as string, value: a.value, type: String(a.type ?? 'string') }));
}

function fieldValues(ctx: NodeContext): Field[] {
  const raw = ctx.param('fields');
  const list = isPlainObject(raw) && Array.isArray(raw.values) ? raw.values : [];
  return list
    .filter(isPlainObject)
    .filter((f) => typeof f.name === 'string')
    .map((f) => {
      const type = String(f.type ?? 'stringValue').replace(/Value$/, '');
      return { name: f.name as string, value: f[`${type}Value`] ?? f.stringValue, type };
    });
}

function legacyValues(ctx: NodeContext): Field[] {
  const raw = ctx.param('values');
  const out: Field[] = [];
  if (!isPlainObject(raw)) return out;
  for (const type of ['boolean', 'number', 'string']) {
    const list = Array.isArray(raw[type]) ? raw[type] : [];
    for (const entry of list)
      if (isPlainObject(entry) && typeof entry.name === 'string')
        out.push({ name: entry.name, value: entry.value ?? (type === 'boolean' ? false : type === 'number' ? 0 : ''), type });
  }
  return out;
}

/** A literal converted to its declared type, as n8n converts it; expressions are left to run. */
function typed(field: Field): unknown {
  const { value, type } = field;
  if (typeof value === 'string' && value.startsWith('=')) return value;
  if (type === 'number' && typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  if (type === 'boolean' && typeof value === 'string') return value === 'true';
  if ((type === 'object' || type === 'array') && typeof value === 'string') {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

type Tree = Map<string, Tree | string>;

function insert(tree: Tree, path: string[], jsonata: string): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (rest.length === 0) {
    tree.set(head, jsonata);
    return;
  }
  const child = tree.get(head);
  const sub: Tree = child instanceof Map ? child : new Map();
  tree.set(head, sub);
  insert(sub, rest, jsonata);
}

/** `$merge([base, {"a": v, "n": $merge([base.n, {…}])}])`: a deep set of the tree's paths into `base`. */
function merged(base: string, tree: Tree): string {
  const members = [...tree.entries()].map(
    ([key, value]) => `${JSON.stringify(key)}: ${typeof value === 'string' ? value : merged(`${base}.${quote(key)}`, value)}`,
  );
  return `$merge([${base}, {${members.join(', ')}}])`;
}

function quote(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && !['and', 'or', 'in', 'true', 'false', 'null', 'function'].includes(key)
    ? key
    : `\`${key}\``;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let at = target;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      Object.defineProperty(at, key, { value, enumerable: true, writable: true, configurable: true });
      return;
    }
    if (!isPlainObject(at[key])) Object.defineProperty(at, key, { value: {}, enumerable: true, writable: true, configurable: true });
    at = at[key] as Record<string, unknown>;
  });
}

function escape(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}
