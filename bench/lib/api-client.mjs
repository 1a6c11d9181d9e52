// The few REST calls the engine benchmarks make, through fetch with the bootstrap token.
/* global fetch */
const MEDIA_TYPE = 'application/vnd.api+json';

/** A non-2xx answer; `status` and `body` say what the server refused. */
export class ApiError extends Error {
  constructor(method, path, status, body, text) {
    super(`${method} ${path} answered ${status}: ${text.slice(0, 400)}`);
    this.status = status;
    this.body = body;
  }

  /** The `code` of the JSON:API error document's errors, e.g. ['graph_too_large']. */
  get codes() {
    return (this.body?.errors ?? []).map((error) => error.code);
  }
}

export function apiClient(baseUrl, token) {
  const headers = { authorization: `Bearer ${token}`, accept: MEDIA_TYPE, 'content-type': MEDIA_TYPE };

  async function call(method, path, body) {
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    let parsed = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (response.status < 200 || response.status > 299) throw new ApiError(method, path, response.status, parsed, text);
    return parsed;
  }

  return {
    baseUrl,
    headers,
    /** Any call: the parsed answer (null when empty); a non-2xx throws ApiError. */
    call,
    createWorkflow: async (name) => (await call('POST', '/api/v1/workflows', { data: { name } })).data.id,
    putGraph: (id, graph) => call('PUT', `/api/v1/workflows/${id}/graph`, { data: { graph, layout: false } }),
    activate: (id) => call('POST', `/api/v1/workflows/${id}/activate`),
    /** Starts an execution of the active workflow; resolves with `{execution_id, status}`. */
    run: (id, input = {}) => call('POST', `/api/v1/workflows/${id}/run`, { data: { input } }),
  };
}
