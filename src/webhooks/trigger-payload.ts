import { parseJsonBody } from './parse-json-body.js';

/** One inbound delivery as the route hands it over: verified, size-checked, not yet interpreted. */
export interface DeliveryRequest {
  /** 'POST', 'PUT', ... in any case. */
  method: string;
  /** Node's IncomingHttpHeaders (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
  /** Lower-case names of the credential headers verification used (authorization, x-hub-signature-256, ...); dropped. */
  removeHeaders: string[];
  /** The query string, already parsed. */
  query: Record<string, unknown>;
  /** The raw body, already size-checked. */
  body: Buffer;
}

/** What the webhook step outputs: its `outputSchema` in src/steps/webhook/index.ts. */
export interface TriggerPayload {
  method: string;
  headers: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

/** Not ok: the route answers 400 with `detail`. */
export type PayloadResult = { ok: true; payload: TriggerPayload } | { ok: false; detail: string };

/** A body in a media type this module does not interpret, kept byte for byte. */
export interface BinaryBody {
  content_type: string;
  encoding: 'base64';
  data: string;
}

const OCTET_STREAM = 'application/octet-stream';

/**
 * Turns a delivery into the trigger payload. Every object in the result that carries
 * sender-chosen keys (headers, form fields, query) is built with Object.fromEntries, which
 * defines own properties, so a `__proto__` or `constructor` key stays a plain key and never
 * reaches a prototype; JSON bodies come from JSON.parse, which does the same.
 */
export function buildTriggerPayload(request: DeliveryRequest): PayloadResult {
  const headers = collectHeaders(request.headers);
  const body = interpretBody(request.body, headers.get('content-type')?.[0]);
  if (!body.ok) return body;
  return {
    ok: true,
    payload: {
      method: request.method.toUpperCase(),
      headers: joinHeaders(headers, new Set(request.removeHeaders.map((name) => name.toLowerCase()))),
      query: Object.fromEntries(Object.entries(request.query)),
      body: body.value,
    },
  };
}

/** Values per lower-cased name, in arrival order; names differing only in case are merged. */
function collectHeaders(raw: DeliveryRequest['headers']): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    headers.set(key, [...(headers.get(key) ?? []), ...(Array.isArray(value) ? value : [value])]);
  }
  return headers;
}

/**
 * Repeats are joined with ", " (RFC 9110 section 5.3), Cookie with "; " (RFC 9113 section
 * 8.2.3). Set-Cookie cannot be joined losslessly, but the step's output schema promises a
 * string per header and a request carrying Set-Cookie is an oddity, so it is joined too.
 *
 * Only the headers the route lists are removed. Cookie is kept: Switchyard authenticates with
 * bearer tokens and sets no cookies, so a Cookie on a delivery is the sender's own data (the
 * request log redacts it anyway, see REDACTED_HEADERS in src/lib/logger.ts). A deployment that shares
 * its domain with cookie-using apps can have the route list `cookie`. Authorization is dropped
 * only when listed, i.e. when it was the delivery's credential.
 */
function joinHeaders(headers: Map<string, string[]>, remove: Set<string>): Record<string, string> {
  return Object.fromEntries(
    [...headers].filter(([name]) => !remove.has(name)).map(([name, values]) => [name, values.join(name === 'cookie' ? '; ' : ', ')]),
  );
}

type BodyResult = { ok: true; value: unknown } | { ok: false; detail: string };

function interpretBody(body: Buffer, contentType: string | undefined): BodyResult {
  if (body.length === 0) return { ok: true, value: null };
  switch (bodyKind(contentType === undefined ? null : parseMediaType(contentType))) {
    case 'json':
      return parseJsonBody(body.toString('utf8'));
    case 'form':
      return { ok: true, value: parseForm(body.toString('utf8')) };
    case 'text':
      return { ok: true, value: body.toString('utf8') };
    case 'binary': {
      const value: BinaryBody = {
        content_type: contentType?.trim() ? contentType : OCTET_STREAM,
        encoding: 'base64',
        data: body.toString('base64'),
      };
      return { ok: true, value };
    }
  }
}

export interface MediaType {
  /** Lower case, e.g. 'application'. */
  type: string;
  /** Lower case, e.g. 'vnd.api+json'. */
  subtype: string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The `type/subtype` of a Content-Type value (RFC 9110 section 8.3.1), lower-cased, parameters
 * (charset included) ignored, surrounding whitespace tolerated; null when it is not
 * `token/token`, which the caller treats like an unknown type.
 */
export function parseMediaType(value: string): MediaType | null {
  const essence = value.split(';', 1)[0]!.trim();
  const slash = essence.indexOf('/');
  const type = essence.slice(0, slash).toLowerCase();
  const subtype = essence.slice(slash + 1).toLowerCase();
  return slash > 0 && TOKEN.test(type) && TOKEN.test(subtype) ? { type, subtype } : null;
}

type BodyKind = 'json' | 'form' | 'text' | 'binary';

/**
 * JSON: application/json and application/*+json. Text: text/*, application/xml and
 * application/*+xml, the textual types webhook senders use (SOAP, RSS, SAML). Everything else
 * (application/javascript included: no sender posts it) is kept as bytes.
 */
function bodyKind(media: MediaType | null): BodyKind {
  if (!media) return 'binary';
  const { type, subtype } = media;
  if (type === 'text') return 'text';
  if (type !== 'application') return 'binary';
  if (subtype === 'json' || subtype.endsWith('+json')) return 'json';
  if (subtype === 'x-www-form-urlencoded') return 'form';
  if (subtype === 'xml' || subtype.endsWith('+xml')) return 'text';
  return 'binary';
}

/**
 * Fields decoded as URLSearchParams does (`+` is a space, bad percent escapes stay literal); a
 * repeated name becomes an array of its values in order. Names are taken literally: `a[b]=1`
 * is the field "a[b]", with no qs-style nesting.
 */
function parseForm(text: string): Record<string, string | string[]> {
  const fields = new Map<string, string | string[]>();
  // URLSearchParams drops one leading "?", which the form encoding does not; a leading empty pair keeps it.
  for (const [name, value] of new URLSearchParams(text.startsWith('?') ? `&${text}` : text)) {
    const seen = fields.get(name);
    if (seen === undefined) fields.set(name, value);
    else if (Array.isArray(seen)) seen.push(value);
    else fields.set(name, [seen, value]);
  }
  return Object.fromEntries(fields);
}
