import { isPlainObject } from '../../lib/json.js';
import { HTTP_METHODS } from '../../steps/http/index.js';
import type { MapResult, NodeContext } from './map-context.js';
import { isSingleExpression, templateAsJsonata } from './n8n-expressions.js';

/** Header and query names whose values are credentials: never imported from a document. */
const SECRET_NAMES =
  /^(authorization|proxy-authorization|cookie|x-api-key|api[-_]?key|apikey|x-auth-token|access[-_]?token|token|secret|client[-_]?secret|password|key)$/i;

type Pairs = Record<string, unknown>;

/**
 * The HTTP Request node in all its versions: 1 and 2 (`requestMethod`, `*ParametersUi` or
 * `*ParametersJson` with `jsonParameters`), 3 and 4 (`method`, `send*` switches with key/value
 * lists or JSON). n8n's authentication and credentials are not imported (requirements point at
 * the headers to fill); a literal secret in a header or query value is dropped the same way.
 */
export function mapHttpRequest(ctx: NodeContext): MapResult {
  const version = ctx.node.typeVersion ?? 1;
  const legacy = version < 3;
  const method = String(ctx.param(legacy ? 'requestMethod' : 'method', 'GET')).toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(method))
    return { placeholder: `the HTTP method ${method} is not one the http step sends` };
  const config: Record<string, unknown> = { method, url: ctx.translate(ctx.param('url', ''), '/url') };
  const headers = legacy
    ? legacyPairs(ctx, 'headerParameters')
    : currentPairs(ctx, 'Headers', 'headerParameters', 'jsonHeaders', 'specifyHeaders');
  const query = legacy ? legacyPairs(ctx, 'queryParameters') : currentPairs(ctx, 'Query', 'queryParameters', 'jsonQuery', 'specifyQuery');
  if ('placeholder' in headers) return headers;
  if ('placeholder' in query) return query;
  config.headers = strings(ctx, headers.pairs, '/headers');
  config.query = strings(ctx, query.pairs, '/query');
  const body = legacy ? legacyBody(ctx) : currentBody(ctx);
  if ('placeholder' in body) return body;
  if (body.value !== undefined) config.body = body.value;
  if (body.contentType) (config.headers as Record<string, unknown>)['content-type'] ??= body.contentType;
  const options = isPlainObject(ctx.param('options')) ? (ctx.param('options') as Record<string, unknown>) : {};
  if (typeof options.timeout === 'number') config.timeout_ms = Math.min(Math.max(1, Math.round(options.timeout)), 300_000);
  const authentication = String(ctx.param('authentication', 'none'));
  if (authentication !== 'none') {
    const kind = String(ctx.param('genericAuthType', ctx.param('nodeCredentialType', authentication)));
    ctx.note(
      'credentials',
      '/headers',
      `the n8n request authenticated with ${kind}; credentials are never imported: add the header (or query parameter) it sent`,
      { authentication: kind },
    );
  }
  ctx.noteCredentials('/headers', 'add what it sent as a header or query parameter');
  const response = isPlainObject(options.response) && isPlainObject(options.response.response) ? options.response.response : {};
  if (response.neverError === true)
    ctx.note(
      'expressions',
      '',
      'n8n never failed on an error status here; set on_error "continue" and read the error port, or check status',
      {},
    );
  return { type: 'http', config, notes: [...ctx.notes] };
}

function legacyPairs(ctx: NodeContext, name: string): { pairs: Pairs } | { placeholder: string } {
  if (ctx.param('jsonParameters') === true) {
    const json = ctx.param(`${name}Json`);
    if (json === undefined || json === '') return { pairs: {} };
    return parseJsonPairs(ctx, json, name);
  }
  const ui = ctx.param(`${name}Ui`);
  const list = isPlainObject(ui) && Array.isArray(ui.parameter) ? ui.parameter : [];
  return { pairs: fromList(list) };
}

function currentPairs(
  ctx: NodeContext,
  what: string,
  name: string,
  jsonName: string,
  specifyName: string,
): { pairs: Pairs } | { placeholder: string } {
  if (ctx.param(`send${what}`) !== true) return { pairs: {} };
  if (ctx.param(specifyName, 'keypair') === 'json') return parseJsonPairs(ctx, ctx.param(jsonName, '{}'), jsonName);
  const raw = ctx.param(name);
  const list = isPlainObject(raw) && Array.isArray(raw.parameters) ? raw.parameters : [];
  return { pairs: fromList(list) };
}

function fromList(list: unknown[]): Pairs {
  const pairs: Pairs = {};
  for (const entry of list)
    if (isPlainObject(entry) && typeof entry.name === 'string' && entry.name !== '') pairs[entry.name] = entry.value ?? '';
  return pairs;
}

function parseJsonPairs(ctx: NodeContext, json: unknown, name: string): { pairs: Pairs } | { placeholder: string } {
  if (isPlainObject(json)) return { pairs: json };
  if (typeof json !== 'string' || json.startsWith('='))
    return { placeholder: `the ${name} are computed by an expression; write them as key/value pairs` };
  try {
    const parsed: unknown = JSON.parse(json);
    return isPlainObject(parsed) ? { pairs: parsed } : { placeholder: `the ${name} are not a JSON object` };
  } catch {
    return { placeholder: `the ${name} are not valid JSON` };
  }
}

/** Header and query values: strings (expressions translated), secrets dropped with a requirement. */
function strings(ctx: NodeContext, pairs: Pairs, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(pairs)) {
    const at = `${path}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (SECRET_NAMES.test(name) && !text.startsWith('=') && text !== '') {
      ctx.note('provider_keys', at, `the n8n node sent a literal ${name}; secrets are never imported: set it again`, { name });
      out[name] = '';
      continue;
    }
    out[name] = ctx.translate(text, at);
  }
  return out;
}

type Body = { value?: unknown; contentType?: string } | { placeholder: string };

function legacyBody(ctx: NodeContext): Body {
  if (ctx.param('sendBinaryData') === true) return { placeholder: 'the request sends binary data, which the http step cannot' };
  if (ctx.param('jsonParameters') === true) {
    const json = ctx.param('bodyParametersJson');
    if (json === undefined || json === '') return {};
    return jsonBody(ctx, json);
  }
  const ui = ctx.param('bodyParametersUi');
  const list = isPlainObject(ui) && Array.isArray(ui.parameter) ? ui.parameter : [];
  if (list.length === 0) return {};
  return { value: ctx.translate(fromList(list), '/body') };
}

function currentBody(ctx: NodeContext): Body {
  if (ctx.param('sendBody') !== true) return {};
  const contentType = String(ctx.param('contentType', 'json'));
  if (contentType === 'multipart-form-data' || contentType === 'binaryData')
    return { placeholder: `the request sends a ${contentType} body, which the http step cannot` };
  if (contentType === 'raw')
    return { value: ctx.translate(String(ctx.param('body', '')), '/body'), contentType: String(ctx.param('rawContentType', 'text/plain')) };
  const keypair = ctx.param('specifyBody', 'keypair') !== 'json';
  if (contentType === 'form-urlencoded') {
    if (!keypair) return { placeholder: 'the form body is written as JSON; write it as key/value pairs' };
    const raw = ctx.param('bodyParameters');
    const pairs = fromList(isPlainObject(raw) && Array.isArray(raw.parameters) ? raw.parameters : []);
    return { value: formBody(ctx, pairs), contentType: 'application/x-www-form-urlencoded' };
  }
  if (keypair) {
    const raw = ctx.param('bodyParameters');
    return { value: ctx.translate(fromList(isPlainObject(raw) && Array.isArray(raw.parameters) ? raw.parameters : []), '/body') };
  }
  return jsonBody(ctx, ctx.param('jsonBody', ''));
}

/**
 * A JSON body: parsed when literal; one expression when it is one; a template (JSON text with
 * expressions inside) is rendered and parsed at run time with `$eval`, as n8n parses it.
 */
function jsonBody(ctx: NodeContext, json: unknown): Body {
  if (typeof json !== 'string') return { value: ctx.translate(json, '/body') };
  if (isSingleExpression(json)) return { value: ctx.translate(json, '/body') };
  if (json.startsWith('=')) {
    const jsonata = templateAsJsonata(json, ctx.expressions);
    if (jsonata.ok) return { value: `{{ $eval(${jsonata.text}) }}` };
    return { value: ctx.translate(json, '/body') };
  }
  if (json.trim() === '') return {};
  try {
    return { value: JSON.parse(json) };
  } catch {
    ctx.note('expressions', '/body', 'the n8n JSON body is not valid JSON (n8n refused it at run time); it is sent as text', {
      original: json,
    });
    return { value: json };
  }
}

/** A urlencoded body: literal pairs encoded now; with expressions, encoded at run time by JSONata. */
function formBody(ctx: NodeContext, pairs: Pairs): string {
  const entries = Object.entries(pairs);
  if (entries.every(([, value]) => typeof value !== 'string' || !value.startsWith('='))) {
    return new URLSearchParams(
      entries.map(([name, value]): [string, string] => [name, typeof value === 'string' ? value : JSON.stringify(value)]),
    ).toString();
  }
  const parts: string[] = [];
  for (const [name, value] of entries) {
    const rendered =
      typeof value === 'string'
        ? templateAsJsonata(value, ctx.expressions)
        : { ok: true as const, text: JSON.stringify(JSON.stringify(value)) };
    if (!rendered.ok)
      return String(ctx.translate(new URLSearchParams(entries.map(([n, v]): [string, string] => [n, String(v)])).toString(), '/body'));
    parts.push(`${JSON.stringify(`${encodeURIComponent(name)}=`)} & $encodeUrlComponent(${rendered.text})`);
  }
  return `{{ ${parts.join(' & "&" & ')} }}`;
}
