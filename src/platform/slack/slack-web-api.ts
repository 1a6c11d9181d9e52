/** Slack's Web API root; SWITCHYARD_SLACK_API_URL replaces it (tests use a local fake). */
export const DEFAULT_SLACK_API_URL = 'https://slack.com/api';

/** A Web API call that did not answer `ok: true`. */
export class SlackApiError extends Error {
  constructor(
    readonly method: string,
    /** Slack's error code (`channel_not_found`, …), or `http_<status>` / `network_error`. */
    readonly error: string,
    readonly httpStatus: number | null,
    readonly retryAfterMs: number | null,
  ) {
    super(`Slack ${method} failed: ${error}`);
    this.name = 'SlackApiError';
  }

  /** Slack's side or the network: worth trying again. */
  get transient(): boolean {
    if (this.error === 'ratelimited' || this.error === 'network_error') return true;
    if (this.httpStatus !== null && (this.httpStatus === 429 || this.httpStatus >= 500)) return true;
    return ['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout'].includes(this.error);
  }
}

/**
 * One Web API call: `POST {apiUrl}/{method}`. JSON bodies with a bearer token (chat.postMessage,
 * auth.test), or a form body with Basic client credentials (oauth.v2.access, as Slack documents
 * it). Answers the parsed body of an `ok: true` answer; throws SlackApiError otherwise.
 */
export async function callSlack(
  apiUrl: string,
  method: string,
  request: {
    token?: string;
    json?: Record<string, unknown>;
    form?: Record<string, string>;
    basic?: { user: string; password: string };
    signal?: AbortSignal;
  },
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {};
  let body: string;
  if (request.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(request.form).toString();
  } else {
    headers['content-type'] = 'application/json; charset=utf-8';
    body = JSON.stringify(request.json ?? {});
  }
  if (request.token) headers.authorization = `Bearer ${request.token}`;
  if (request.basic) headers.authorization = `Basic ${Buffer.from(`${request.basic.user}:${request.basic.password}`).toString('base64')}`;
  let response: Response;
  try {
    response = await fetch(`${apiUrl}/${method}`, { method: 'POST', headers, body, signal: request.signal ?? AbortSignal.timeout(30_000) });
  } catch (error) {
    if (request.signal?.aborted) throw error;
    throw new SlackApiError(method, 'network_error', null, null);
  }
  const retryAfter = Number(response.headers.get('retry-after'));
  const retryAfterMs = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 3600) * 1000 : null;
  let parsed: unknown;
  try {
    parsed = await response.json();
  } catch {
    throw new SlackApiError(method, `http_${response.status}`, response.status, retryAfterMs);
  }
  const answer = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  if (response.status !== 200 || answer.ok !== true) {
    throw new SlackApiError(
      method,
      typeof answer.error === 'string' ? answer.error : `http_${response.status}`,
      response.status,
      retryAfterMs,
    );
  }
  return answer;
}
