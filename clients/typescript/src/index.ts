import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** The media type of every JSON:API request body and answer of the API. */
export const JSONAPI_MEDIA_TYPE = 'application/vnd.api+json';

export interface SwitchyardClientOptions extends Omit<ClientOptions, 'baseUrl' | 'querySerializer' | 'bodySerializer'> {
  /** Where the service answers, e.g. http://127.0.0.1:8080 (its SWITCHYARD_BASE_URL). */
  baseUrl: string;
  /** An API token (sy_…): pinned to one workspace, scope read or build. */
  token: string;
}

export type SwitchyardClient = Client<paths, `${string}/${string}`>;

function appendParameter(parts: string[], name: string, value: unknown): void {
  if (value === undefined) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => appendParameter(parts, `${name}[${index}]`, item));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) appendParameter(parts, `${name}[${key}]`, member);
  } else {
    parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(value === null ? '' : String(value))}`);
  }
}

/**
 * The query string as the API reads it: `filter`, `page` and `fields` are deepObject parameters
 * nested as deep as the filter goes (`filter[or][0][status][eq]=failed`), which openapi-fetch's
 * own serializer does to one level only; lists are indexed (`filter[status][in][0]=a`).
 */
export function serializeQuery(query: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) appendParameter(parts, name, value);
  return parts.join('&');
}

/** A request with a body is sent as JSON:API (the API answers 415 to other JSON types on its resource routes). */
const jsonApiBodies: Middleware = {
  onRequest({ request }) {
    if (request.body !== null && request.headers.get('content-type')?.startsWith('application/json')) {
      request.headers.set('content-type', JSONAPI_MEDIA_TYPE);
    }
    return request;
  },
};

/**
 * A typed client of the Switchyard API: every path, parameter, body and answer is typed from the
 * OpenAPI document (schema.d.ts), so `client.GET('/api/v1/workflows/{id}', …)` checks its
 * arguments and its `data` and `error` are the documented shapes.
 */
export function createSwitchyardClient(options: SwitchyardClientOptions): SwitchyardClient {
  const { baseUrl, token, headers, ...rest } = options;
  const client = createClient<paths>({
    ...rest,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    querySerializer: serializeQuery,
    headers: { accept: `${JSONAPI_MEDIA_TYPE}, application/json`, ...headers, authorization: `Bearer ${token}` },
  });
  client.use(jsonApiBodies);
  return client;
}
