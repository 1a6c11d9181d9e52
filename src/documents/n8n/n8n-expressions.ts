/**
 * n8n expressions (`={{ $json.name }}`, JavaScript inside `{{ }}`) to Switchyard's (`{{ … }}`,
 * JSONata; src/engine/expressions.ts). Only what means exactly the same is translated: paths
 * into the node's input, into another node's output and into the run, plus `$now` and `$today`.
 * Anything else (operators, method calls, `$items()`, Luxon, `$env`) is left as text for the
 * import report to list: a wrong translation would run silently, an untranslated one is
 * reported and fails loudly.
 */

/** How paths into n8n items become paths into Switchyard outputs (see `ExpressionContext`). */
export interface PathTarget {
  /** JSONata root: `input`, `nodes.fetch`. */
  root: string;
  /** Renames/prefixes needed because the step's output is shaped unlike n8n's item (http: `body`). */
  adapt: (accessors: string[]) => string[] | null;
}

export interface ExpressionContext {
  /** The node's own input (`$json`, `$input.item.json`). */
  input: PathTarget;
  /** Another node's output by its n8n name (`$('Name')`, `$node["Name"]`); undefined when there is no such node. */
  node: (name: string) => PathTarget | undefined;
}

export type Translation = { ok: true; text: string } | { ok: false; reason: string };

type Token = { kind: 'ident' | 'string' | 'number' | 'punct'; value: string };

/** JSONata names that a bare path segment cannot be (they would parse as operators or literals). */
const JSONATA_RESERVED = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** One JavaScript expression (the text between `{{` and `}}`) as a JSONata expression. */
export function translateJsExpression(source: string, ctx: ExpressionContext): Translation {
  const tokens = tokenize(source.trim());
  if (tokens === null) return { ok: false, reason: 'uses syntax only JavaScript has' };
  const parser = new PathParser(tokens, ctx);
  const result = parser.parse();
  if (!result.ok) return result;
  if (!parser.done()) return { ok: false, reason: 'combines values with JavaScript operators or calls' };
  return result;
}

/**
 * A whole n8n parameter value. A string starting with `=` is a template whose `{{ }}` parts are
 * JavaScript; any other value is literal. Returns the Switchyard value: the same literal, or a
 * template whose parts are JSONata.
 */
export function translateParameter(
  value: string,
  ctx: ExpressionContext,
): { ok: true; value: string } | { ok: false; reason: string; text: string } {
  if (!value.startsWith('=')) return { ok: true, value };
  const template = value.slice(1);
  const parts = splitN8nTemplate(template);
  if (parts === null) return { ok: false, reason: 'has an unclosed {{', text: template };
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      if (part.includes('{{')) return { ok: false, reason: 'holds literal {{ that Switchyard would read as an expression', text: template };
      out += part;
      continue;
    }
    const translated = translateJsExpression(part.expression, ctx);
    if (!translated.ok) return { ok: false, reason: `{{ ${part.expression.trim()} }} ${translated.reason}`, text: template };
    out += `{{ ${translated.text} }}`;
  }
  return { ok: true, value: out };
}

/** `={{ x }}`: a template that is exactly one expression (n8n then keeps the value's type, as Switchyard does). */
export function isSingleExpression(value: unknown): boolean {
  if (typeof value !== 'string' || !value.startsWith('=')) return false;
  const parts = splitN8nTemplate(value.slice(1));
  return (
    parts !== null && parts.filter((p) => typeof p !== 'string' || p.trim() !== '').length === 1 && parts.some((p) => typeof p !== 'string')
  );
}

/**
 * A template as JSONata that builds the same string n8n renders: literal parts as string
 * literals, expressions through `$string` (objects as JSON text, as n8n prints them). Used where
 * the rendered text is parsed again (a JSON body written as a template).
 */
export function templateAsJsonata(value: string, ctx: ExpressionContext): Translation {
  const template = value.startsWith('=') ? value.slice(1) : value;
  const parts = value.startsWith('=') ? splitN8nTemplate(template) : [template];
  if (parts === null) return { ok: false, reason: 'has an unclosed {{' };
  const pieces: string[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      if (part !== '') pieces.push(JSON.stringify(part));
      continue;
    }
    const translated = translateJsExpression(part.expression, ctx);
    if (!translated.ok) return { ok: false, reason: `{{ ${part.expression.trim()} }} ${translated.reason}` };
    pieces.push(`$string(${translated.text})`);
  }
  return { ok: true, text: pieces.length === 0 ? '""' : pieces.join(' & ') };
}

type TemplatePart = string | { expression: string };

/** `a {{ x }} b` -> ['a ', {expression: ' x '}, ' b']; null when a `{{` is never closed. */
export function splitN8nTemplate(template: string): TemplatePart[] | null {
  const parts: TemplatePart[] = [];
  let at = 0;
  for (;;) {
    const open = template.indexOf('{{', at);
    if (open === -1) break;
    const close = closeOf(template, open + 2);
    if (close === -1) return null;
    if (open > at) parts.push(template.slice(at, open));
    parts.push({ expression: template.slice(open + 2, close) });
    at = close + 2;
  }
  if (at < template.length) parts.push(template.slice(at));
  return parts;
}

/** The `}}` closing an expression, skipping JavaScript strings and balanced braces. */
function closeOf(text: string, from: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote !== null) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0 && text[i + 1] === '}') return i;
      if (depth > 0) depth--;
    }
  }
  return -1;
}

function tokenize(source: string): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < source.length && /[A-Za-z0-9_$]/.test(source[j]!)) j++;
      tokens.push({ kind: 'ident', value: source.slice(i, j) });
      i = j;
      continue;
    }
    if (/[0-9]/.test(c)) {
      let j = i + 1;
      while (j < source.length && /[0-9]/.test(source[j]!)) j++;
      tokens.push({ kind: 'number', value: source.slice(i, j) });
      i = j;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let text = '';
      while (j < source.length && source[j] !== c) {
        if (source[j] === '\\') {
          const next = source[j + 1];
          if (next === undefined || !['\\', "'", '"'].includes(next)) return null;
          text += next;
          j += 2;
        } else {
          text += source[j];
          j++;
        }
      }
      if (j >= source.length) return null;
      tokens.push({ kind: 'string', value: text });
      i = j + 1;
      continue;
    }
    if ('.[]()'.includes(c)) {
      tokens.push({ kind: 'punct', value: c });
      i++;
      continue;
    }
    // Any operator, template literal, optional chaining, arrow…: not a plain path.
    tokens.push({ kind: 'punct', value: c });
    i++;
  }
  return tokens;
}

/** Parses `root accessor* (.toUpperCase()|.toLowerCase())?` and renders JSONata. */
class PathParser {
  private at = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly ctx: ExpressionContext,
  ) {}

  done(): boolean {
    return this.at === this.tokens.length;
  }

  parse(): Translation {
    const first = this.next();
    if (first?.kind !== 'ident') return { ok: false, reason: 'is not a path into the data' };
    let target: PathTarget | undefined;
    let index: string | null = null;
    switch (first.value) {
      case '$json':
        target = this.ctx.input;
        break;
      case '$input': {
        const which = this.itemSelector();
        if (which === null || !this.expectJson()) return { ok: false, reason: 'reads $input in a way Switchyard has no equivalent for' };
        target = this.ctx.input;
        index = which;
        break;
      }
      case '$': {
        const name = this.callArgument();
        if (name === null) return { ok: false, reason: 'names a node with something other than a string' };
        target = this.ctx.node(name);
        if (target === undefined) return { ok: false, reason: `names a node "${name}" the workflow does not have` };
        const which = this.itemSelector();
        if (which === null || !this.expectJson())
          return { ok: false, reason: `reads $('${name}') in a way Switchyard has no equivalent for` };
        index = which;
        break;
      }
      case '$node': {
        const name = this.memberName();
        if (name === null) return { ok: false, reason: 'names a node with something other than a string' };
        target = this.ctx.node(name);
        if (target === undefined) return { ok: false, reason: `names a node "${name}" the workflow does not have` };
        if (!this.expectJson()) return { ok: false, reason: `reads $node["${name}"] other than through .json` };
        break;
      }
      case '$now':
      case '$today': {
        if (!this.done()) return { ok: false, reason: `calls Luxon methods on ${first.value}` };
        // n8n renders a DateTime as Luxon's toISO(): milliseconds and "Z" in UTC, which is what $now() gives.
        return { ok: true, text: first.value === '$now' ? '$now()' : '$fromMillis($floor($toMillis($now()) / 86400000) * 86400000)' };
      }
      case '$workflow':
      case '$execution': {
        const member = this.memberName();
        if (member !== 'id' || !this.done())
          return { ok: false, reason: `reads ${first.value}.${member ?? '…'}, which Switchyard does not offer` };
        return { ok: true, text: first.value === '$workflow' ? 'workflow.id' : 'execution.id' };
      }
      default:
        return { ok: false, reason: `uses ${first.value}, which Switchyard does not offer` };
    }
    const accessors: string[] = [];
    let method: string | null = null;
    while (!this.done()) {
      const save = this.at;
      const member = this.memberName();
      if (member === null) {
        this.at = save;
        const numeric = this.numericIndex();
        if (numeric === null) break;
        accessors.push(`[${numeric}]`);
        continue;
      }
      if ((member === 'toUpperCase' || member === 'toLowerCase') && this.peek('(')) {
        this.next();
        if (!this.peek(')')) return { ok: false, reason: `passes arguments to ${member}` };
        this.next();
        method = member === 'toUpperCase' ? '$uppercase' : '$lowercase';
        break;
      }
      if (this.peek('(')) return { ok: false, reason: `calls ${member}(), which has no exact JSONata equivalent` };
      accessors.push(member);
    }
    const adapted = target.adapt(accessors);
    if (adapted === null) return { ok: false, reason: 'reads a field the Switchyard step does not output' };
    const rendered = render(target.root, index, adapted);
    if (rendered === null) return { ok: false, reason: 'reads a field name JSONata cannot spell' };
    return { ok: true, text: method === null ? rendered : `${method}(${rendered})` };
  }

  /** `.item`, `.first()`, `.last()` -> the index into a multi-item output (null: the item itself). */
  private itemSelector(): string | null {
    const member = this.memberName();
    if (member === 'item') return '';
    if ((member === 'first' || member === 'last') && this.peek('(')) {
      this.next();
      if (!this.peek(')')) return null;
      this.next();
      return member === 'first' ? '[0]' : '[-1]';
    }
    return null;
  }

  private expectJson(): boolean {
    return this.memberName() === 'json';
  }

  private callArgument(): string | null {
    if (!this.peek('(')) return null;
    this.next();
    const arg = this.next();
    if (arg?.kind !== 'string' || !this.peek(')')) return null;
    this.next();
    return arg.value;
  }

  /** `.name` or `["name"]`. */
  private memberName(): string | null {
    if (this.peek('.')) {
      this.next();
      const ident = this.next();
      return ident?.kind === 'ident' ? ident.value : null;
    }
    if (this.peek('[')) {
      const save = this.at;
      this.next();
      const key = this.next();
      if (key?.kind === 'string' && this.peek(']')) {
        this.next();
        return key.value;
      }
      this.at = save;
    }
    return null;
  }

  private numericIndex(): string | null {
    if (!this.peek('[')) return null;
    this.next();
    const n = this.next();
    if (n?.kind !== 'number' || !this.peek(']')) return null;
    this.next();
    return n.value;
  }

  private peek(punct: string): boolean {
    const t = this.tokens[this.at];
    return t !== undefined && t.kind === 'punct' && t.value === punct;
  }

  private next(): Token | undefined {
    return this.tokens[this.at++];
  }
}

function render(root: string, index: string | null, accessors: string[]): string | null {
  let out = root + (index ?? '');
  for (const accessor of accessors) {
    if (accessor.startsWith('[')) {
      out += accessor;
      continue;
    }
    if (IDENT.test(accessor) && !accessor.includes('$') && !JSONATA_RESERVED.has(accessor)) out += `.${accessor}`;
    else if (!accessor.includes('`')) out += `.\`${accessor}\``;
    else return null;
  }
  return out;
}
