import { jsonApiViolations } from '../jsonapi-schema.js';
import { JSONAPI, type FuzzRequest, type FuzzResponse } from './fuzz-seed.js';

/**
 * What the fuzz holds every answer to: no 5xx; every 4xx a JSON:API error document (media type,
 * the JSON:API 1.0 schema, each error's status the answer's, a code, a title and a detail); and
 * nothing of the other workspace in it beyond what the request itself carried.
 */
export type FindingKind = 'server_error' | 'not_jsonapi_error' | 'leak' | 'cross_workspace';

export interface Finding {
  kind: FindingKind;
  detail: string;
}

/** What must never show up in the fuzzing workspace's answers. */
export interface ForeignData {
  /** A string in every name and description of the other workspace. */
  marker: string;
  /** The other workspace's ids (resources, workspace, user). */
  ids: string[];
  /**
   * Those of its ids the fuzz itself has sent so far, in any request: stored data (a name, a
   * graph, a captured webhook payload) may echo them back later, which reveals nothing.
   */
  sent: Set<string>;
}

function headerValue(headers: FuzzResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  return value === undefined ? undefined : Array.isArray(value) ? value.join(', ') : String(value);
}

/** Violations of the JSON:API error document rules by a 4xx answer (none for other statuses). */
export function errorDocumentViolations(method: string, response: FuzzResponse): string[] {
  if (response.status < 400 || response.status > 499) return [];
  const type = headerValue(response.headers, 'content-type');
  if (type !== JSONAPI) return [`content-type ${type ?? '(none)'}`];
  if (method === 'HEAD') return [];
  let document: { errors?: { status?: unknown; code?: unknown; title?: unknown; detail?: unknown }[] };
  try {
    document = JSON.parse(response.body);
  } catch {
    return [`body is not JSON: ${response.body.slice(0, 80)}`];
  }
  const problems = jsonApiViolations(document);
  if (!Array.isArray(document.errors) || document.errors.length === 0) problems.push('no errors[]');
  for (const error of document.errors ?? []) {
    if (error.status !== String(response.status)) problems.push(`error status ${String(error.status)} on a ${response.status}`);
    for (const member of ['code', 'title', 'detail'] as const)
      if (typeof error[member] !== 'string' || error[member] === '') problems.push(`error without ${member}`);
  }
  return problems;
}

export function requestText(request: FuzzRequest): string {
  const body = request.body === undefined ? '' : Buffer.isBuffer(request.body) ? request.body.toString('latin1') : request.body;
  let url = request.url;
  try {
    url = decodeURIComponent(request.url);
  } catch {
    // keep the raw URL: a foreign id in it is as sent
  }
  return `${request.url} ${url} ${body}`.toLowerCase();
}

/** Notes the other workspace's ids a request carries; call it before sending when requests run concurrently. */
export function recordSent(request: FuzzRequest, foreign: ForeignData): void {
  const sent = requestText(request);
  for (const id of foreign.ids) if (sent.includes(id.toLowerCase())) foreign.sent.add(id);
}

export function leaks(request: FuzzRequest, response: FuzzResponse, foreign: ForeignData): string[] {
  const body = response.body.toLowerCase();
  recordSent(request, foreign);
  const found: string[] = [];
  if (body.includes(foreign.marker.toLowerCase())) found.push(`the other workspace's names (${foreign.marker})`);
  for (const id of foreign.ids)
    if (!foreign.sent.has(id) && body.includes(id.toLowerCase())) found.push(`the other workspace's id ${id}, never sent`);
  return found;
}

/** Every finding for one answer. */
export function checkAnswer(request: FuzzRequest, response: FuzzResponse, foreign: ForeignData): Finding[] {
  const findings: Finding[] = [];
  if (response.status >= 500) findings.push({ kind: 'server_error', detail: `${response.status}: ${response.body.slice(0, 300)}` });
  for (const problem of errorDocumentViolations(request.method, response))
    findings.push({ kind: 'not_jsonapi_error', detail: `${response.status}: ${problem}` });
  for (const leak of leaks(request, response, foreign)) findings.push({ kind: 'leak', detail: `${response.status}: ${leak}` });
  return findings;
}

/** A request in one line, for reports (bodies and long URLs cut). */
export function describeRequest(request: FuzzRequest): string {
  const body =
    request.body === undefined
      ? ''
      : ` body ${(Buffer.isBuffer(request.body) ? `<${request.body.length} bytes>` : request.body).slice(0, 160)}`;
  const url = request.url.length > 200 ? `${request.url.slice(0, 200)}…(${request.url.length})` : request.url;
  const headers = Object.entries(request.headers)
    .map(([k, v]) => `${k}: ${k === 'authorization' ? v.replace(/sy_\w+/, 'sy_…') : v.slice(0, 60)}`)
    .join('; ');
  return `${request.method} ${url} [${headers}]${body}`;
}
