import fc from 'fast-check';
import { idKindOf, type IdKind, type Operation } from './openapi-operations.js';
import { JSONAPI, type FuzzRequest, type WorkspaceIds } from './fuzz-seed.js';
import { ODD_SEGMENTS, oddJson, oddNumber, oddString, percentEncode } from './fuzz-values.js';
import { bodyFor, PATH_ID } from './fuzz-bodies.js';

/**
 * fast-check arbitraries of whole HTTP requests, generated from the OpenAPI operations: the
 * operation's method (or another), its path with valid and invalid parameters, list queries,
 * headers, and bodies (valid envelopes derived from the schemas, and mutated ones).
 */
export interface FuzzContext {
  operations: Operation[];
  /** The fuzzing workspace's resources. */
  own: WorkspaceIds;
  /** Another workspace's resources: never visible with `tokens`. */
  foreign: WorkspaceIds;
  /**
   * Resources of the fuzzing workspace that only the cross-workspace pairs use, so no concurrent
   * fuzz request deletes one between a pair's two requests.
   */
  reserved: WorkspaceIds;
  /** Tokens of the fuzzing workspace (build, read) and of a workspace not on the Pro plan. */
  tokens: { build: string; read: string; free: string };
  stepTypes: string[];
}

const OTHER_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'SEARCH', 'LOCK', 'TRACE'];

/** Paths the document does not list (hidden, unknown, or odd spellings of listed ones). */
const OTHER_PATHS = [
  '/',
  '/api',
  '/api/v1',
  '/api/v1/',
  '/api/docs',
  '/api/docs/',
  '/api/docs/openapi.json',
  '/api/docs/json',
  '/api/docs/yaml',
  '/api/docs/static/index.css',
  '/api/docs/static/../../healthz',
  '/healthz',
  '/readyz',
  '/metrics',
  '/webhooks',
  '/webhooks/',
  '/webhooks/inbound/slack',
  '/api/v1/workflows/map',
  '//api/v1/me',
  '/api/v1//workflows',
  '/API/V1/ME',
  '/api/v1/me/',
  '/api/v1/me;x=1',
  '/api/v2/me',
  '/api/v1/stores',
  '/api/v1/workflows/',
  '/%2e%2e/%2e%2e/etc/passwd',
  '/api/v1/%2e%2e/v1/me',
  '/favicon.ico',
  '/*',
];

export function idsOf(ids: WorkspaceIds, kind: IdKind): string[] {
  return kind === 'other' ? [] : ids[kind];
}

function pathValue(ctx: FuzzContext, operation: Operation, param: string): fc.Arbitrary<string> {
  const kind = idKindOf(operation, param);
  const own = idsOf(ctx.own, kind);
  // Another workspace's webhook ids are public addresses, not workspace data: left out.
  const foreign = kind === 'webhook' ? [] : idsOf(ctx.foreign, kind);
  const choices: fc.WeightedArbitrary<string>[] = [
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 3, arbitrary: fc.constantFrom(...ODD_SEGMENTS) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }).map(percentEncode) },
  ];
  if (own.length > 0)
    choices.push(
      { weight: 8, arbitrary: fc.constantFrom(...own) },
      { weight: 1, arbitrary: fc.constantFrom(...own).map((id) => id.toUpperCase()) },
    );
  if (foreign.length > 0) choices.push({ weight: 3, arbitrary: fc.constantFrom(...foreign) });
  return fc.oneof(...choices);
}

const FILTER_OPERATORS = [
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
  'contains',
  'like',
  'ilike',
  'string_starts_with',
  'string_ends_with',
  'regex',
  '',
];

/** One query parameter `[name, value]`, unencoded. */
function queryPart(ctx: FuzzContext, operation: Operation): fc.Arbitrary<[string, string]> {
  const attributes = [...Object.keys(operation.attributes), 'id', 'workflow', 'workflow_execution', 'nope', ''];
  const ids = [
    ...ctx.own.workflow,
    ...ctx.own.folder,
    ...ctx.own.execution,
    ...ctx.foreign.workflow,
    ...ctx.foreign.folder,
    ...ctx.foreign.execution,
  ];
  const value = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...ids) },
    { weight: 3, arbitrary: oddString },
    { weight: 2, arbitrary: oddNumber.map(String) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'true',
        'false',
        'active',
        'inactive',
        'running',
        'failed',
        '2026-11-01T00:00:00Z',
        '1,2,3',
        `${ids[0] ?? ''},${ids[1] ?? ''}`,
      ),
    },
  );
  const attribute = fc.constantFrom(...attributes);
  const type = fc.constantFrom(operation.resourceType ?? 'workflow', 'workflow', 'execution', 'workflow-folder', 'execution-step', 'nope');
  const fieldList = fc.subarray(attributes).map((names) => names.join(','));
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(attribute, fc.constantFrom(...FILTER_OPERATORS), value)
        .map(([a, op, v]): [string, string] => [op ? `filter[${a}][${op}]` : `filter[${a}]`, v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('and', 'or'), fc.nat(3), attribute, value)
        .map(([c, i, a, v]): [string, string] => [`filter[${c}][${i}][${a}][eq]`, v]),
    },
    { weight: 1, arbitrary: fc.tuple(attribute, value).map(([a, v]): [string, string] => [`filter[not][${a}]`, v]) },
    { weight: 1, arbitrary: fc.tuple(attribute, fc.nat(200), value).map(([a, i, v]): [string, string] => [`filter[${a}][in][${i}]`, v]) },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.tuple(fc.boolean(), attribute), { maxLength: 4 })
        .map((parts): [string, string] => ['sort', parts.map(([d, a]) => `${d ? '-' : ''}${a}`).join(',')]),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom('limit', 'offset', 'after', 'before', 'count', 'size', ''),
          fc.oneof(oddNumber.map(String), oddString, fc.constantFrom('true', 'eyJ4IjoxfQ', '50')),
        )
        .map(([k, v]): [string, string] => [`page[${k}]`, v]),
    },
    { weight: 2, arbitrary: fc.tuple(type, fieldList).map(([t, f]): [string, string] => [`fields[${t}]`, f]) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('workflow', 'workflow_execution', 'parent', 'nope', '').map((v): [string, string] => ['include', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom('colour', 'filter', 'page', 'fields', 'search', 'status', '__proto__', 'filter[__proto__][x]', 'a'.repeat(300)),
          oddString,
        )
        .map(([k, v]): [string, string] => [k, v]),
    },
  );
}

/** Encodes a query the ways clients do: brackets raw or escaped, values escaped, sometimes oddly. */
function encodeQuery(parts: [string, string][], style: number): string {
  return parts
    .map(([name, value]) => {
      const key = style === 1 ? percentEncode(name) : name.replace(/[^\w[\].-]/g, (c) => percentEncode(c));
      const encoded = style === 2 ? percentEncode(value).replace(/%20/g, '+') : percentEncode(value);
      return `${key}=${encoded}`;
    })
    .join('&');
}

function headersFor(ctx: FuzzContext, hasBody: boolean): fc.Arbitrary<Record<string, string>> {
  const { build, read, free } = ctx.tokens;
  const authorization = fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${build}`) },
    { weight: 2, arbitrary: fc.constant(`Bearer ${read}`) },
    { weight: 1, arbitrary: fc.constant(`Bearer ${free}`) },
    { weight: 2, arbitrary: fc.constant(undefined) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Bearer sy_',
        `Bearer ${build.slice(0, -1)}x`,
        `bearer ${build}`,
        `Bearer  ${build}`,
        `Bearer ${build} extra`,
        `Basic ${Buffer.from('a:b').toString('base64')}`,
        `Bearer ${'A'.repeat(4000)}`,
        'Bearer sy_\u00ff',
      ),
    },
  );
  const accept = fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.constant(JSONAPI) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '*/*',
        'application/*',
        'application/json',
        'text/html',
        `${JSONAPI}; ext=bulk`,
        `${JSONAPI};q=0`,
        `text/html, ${JSONAPI}`,
        'garbage',
        '',
        ',,,',
        `${JSONAPI}; profile="x", */*;q=0.1`,
      ),
    },
  );
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant(JSONAPI) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        `${JSONAPI}; charset=utf-8`,
        `${JSONAPI}; charset=latin1`,
        `${JSONAPI}; ext=bulk`,
        'application/json',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/x-ndjson',
        'garbage',
        '',
        `${JSONAPI.toUpperCase()}`,
      ),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  const extra: fc.Arbitrary<Record<string, string>> = fc.oneof(
    { weight: 6, arbitrary: fc.constant<Record<string, string>>({}) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Record<string, string>[]>(
        { 'x-request-id': 'fuzz' },
        { 'x-request-id': 'x'.repeat(100) },
        { 'x-request-id': '../../etc' },
        { 'x-forwarded-for': '10.0.0.1, 127.0.0.1' },
        { 'accept-version': '2.x' },
        { 'if-none-match': '*' },
      ),
    },
    { weight: 1, arbitrary: fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,12}$/), fc.stringMatching(/^[ -~]{0,64}$/), { maxKeys: 3 }) },
  );
  return fc.record({ authorization, accept, contentType, extra }).map(({ authorization: a, accept: ac, contentType: ct, extra: ex }) => {
    const headers: Record<string, string> = { ...ex };
    if (a !== undefined) headers.authorization = a;
    if (ac !== undefined) headers.accept = ac;
    if (hasBody && ct !== undefined) headers['content-type'] = ct;
    return headers;
  });
}

function decodeSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The requests of one operation. Every part is an arbitrary built once here (no `chain` per
 * request): building arbitraries is what costs in fast-check, and the long run draws 100,000.
 */
function operationRequests(
  ctx: FuzzContext,
  operation: Operation,
  headers: fc.Arbitrary<Record<string, string>>,
): fc.Arbitrary<FuzzRequest> {
  const params = fc.tuple(...operation.pathParams.map((param) => pathValue(ctx, operation, param)));
  const method = fc.oneof(
    { weight: 9, arbitrary: fc.constant(operation.method) },
    { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) },
  );
  const query = fc.tuple(fc.array(queryPart(ctx, operation), { maxLength: operation.list ? 5 : 2 }), fc.nat(2));
  return fc.tuple(method, params, query, bodyFor(ctx, operation), headers).map(([m, values, [parts, style], body, allHeaders]) => {
    let path = operation.path;
    operation.pathParams.forEach((param, index) => (path = path.replace(`{${param}}`, values[index] ?? '')));
    const queryString = parts.length > 0 ? `?${encodeQuery(parts, style)}` : '';
    const id = operation.pathParams.includes('id') ? JSON.stringify(decodeSafe(values[operation.pathParams.indexOf('id')] ?? '')) : '""';
    const filled = typeof body === 'string' ? body.split(JSON.stringify(PATH_ID)).join(id) : body;
    const { 'content-type': contentType, ...rest } = allHeaders;
    const sent = filled !== undefined && contentType !== undefined ? { ...rest, 'content-type': contentType } : rest;
    return { method: m, url: `${path}${queryString}`, headers: sent, ...(filled !== undefined ? { body: filled } : {}) };
  });
}

/** Any request: mostly an operation of the document, sometimes another path or method. */
export function requestArbitrary(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const headers = headersFor(ctx, true);
  const documented = fc.oneof(...ctx.operations.map((operation) => operationRequests(ctx, operation, headers)));
  const other = fc
    .tuple(
      fc.constantFrom(...OTHER_METHODS),
      fc.constantFrom(...OTHER_PATHS),
      headers,
      fc.option(
        oddJson.map((v) => JSON.stringify(v) ?? 'null'),
        { nil: undefined },
      ),
    )
    .map(([method, url, allHeaders, body]): FuzzRequest => ({
      method,
      url,
      headers: allHeaders,
      ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { body } : {}),
    }));
  return fc.oneof({ weight: 9, arbitrary: documented }, { weight: 1, arbitrary: other });
}
