import { NonRetriableError } from '../../engine/step-errors.js';
import { HTTP_METHODS } from './index.js';

export type HttpMethod = (typeof HTTP_METHODS)[number];

/** One request as sent on the wire; redirects derive the next one from it. */
export interface HttpRequestPlan {
  method: HttpMethod;
  url: URL;
  /** Lower-cased names, so lookups and the cross-origin strip need no case folding. */
  headers: Record<string, string>;
  body: string | undefined;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * What users may put in messages and the step record: no credentials, and no query string,
 * which is where API keys travel (`?api_key=…`).
 */
export function redactUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

const invalid = (detail: string) => new NonRetriableError(detail, { code: 'invalid_config' });

/** Parses an absolute http(s) URL; other schemes (file:, ftp:, data:, …) are refused outright. */
export function parseHttpUrl(value: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    // The text is not echoed: a malformed URL may still carry a key or a password.
    throw new NonRetriableError(base ? 'the redirect Location is not a valid URL' : 'config.url is not a valid URL', {
      code: 'invalid_url',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NonRetriableError(`only http and https URLs can be requested, not ${url.protocol}`, { code: 'unsupported_protocol' });
  }
  return url;
}

/** Header and query values come from expressions: numbers and booleans are fine as text, null drops the entry. */
function stringMap(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`config.${field} must be an object of strings.`);
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || item === null) continue;
    if (typeof item === 'object') throw invalid(`config.${field}.${key} must be a string.`);
    result[key] = String(item);
  }
  return result;
}

export function readTimeout(config: Record<string, unknown>): number {
  const value = config.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 300_000) {
    throw invalid('config.timeout_ms must be a whole number from 1 to 300000.');
  }
  return value;
}

/** The first request of a step, from its expression-resolved config. */
export function planRequest(config: Record<string, unknown>): HttpRequestPlan {
  const method = typeof config.method === 'string' ? config.method.toUpperCase() : (config.method ?? 'GET');
  if (!HTTP_METHODS.includes(method as HttpMethod))
    throw invalid(`config.method must be one of ${HTTP_METHODS.map((m) => `"${m}"`).join(', ')}.`);
  if (typeof config.url !== 'string' || config.url.trim() === '') throw invalid('config.url must be a non-empty string.');
  const url = parseHttpUrl(config.url.trim());

  for (const [key, value] of Object.entries(stringMap(config.query, 'query'))) url.searchParams.set(key, value);

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(stringMap(config.headers, 'headers'))) headers[name.toLowerCase()] = value;

  // Credentials in the URL (https://user:pass@host) become Basic auth, as curl does; an explicit
  // Authorization header wins. They leave the URL so no message or record can show them.
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization ??= `Basic ${Buffer.from(credentials).toString('base64')}`;
    url.username = '';
    url.password = '';
  }

  let body: string | undefined;
  if (config.body === undefined || config.body === null || method === 'HEAD') body = undefined;
  else if (typeof config.body === 'string') body = config.body;
  else {
    body = JSON.stringify(config.body);
    headers['content-type'] ??= 'application/json';
  }
  // Some APIs (GitHub's among them) refuse requests without a User-Agent.
  headers['user-agent'] ??= 'Switchyard';
  // Advertised because the body reader decompresses (and counts the size limit after decompression).
  headers['accept-encoding'] ??= 'gzip, deflate, br';
  return { method: method as HttpMethod, url, headers, body };
}

const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie'] as const;

/**
 * The request a redirect asks for, following the Fetch standard: 303 turns anything but HEAD
 * into a body-less GET, and so do 301/302 for a POST (what every browser and client does);
 * 307/308 repeat the request as it was. Credentials never follow the request to another origin
 * (scheme, host or port), so a redirect cannot hand an API token to a third party.
 */
export function redirectRequest(previous: HttpRequestPlan, status: number, location: string): HttpRequestPlan {
  const url = parseHttpUrl(location, previous.url);
  // Credentials written into a Location header are the server's, not the user's: never send them.
  url.username = '';
  url.password = '';
  const headers = { ...previous.headers };
  let { method, body } = previous;
  if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
    method = 'GET';
    body = undefined;
    for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) delete headers[name];
  }
  if (url.origin !== previous.url.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
  return { method, url, headers, body };
}
