/**
 * Every error the API can answer with, by code. The HTTP status and title live here only;
 * services throw `AppError(code, detail, source)` and the error handler renders the document.
 * docs/errors.md lists the same table for API users.
 */
export const ERROR_CODES = {
  bad_request: { status: 400, title: 'Bad request' },
  invalid_query_parameter: { status: 400, title: 'Invalid query parameter' },
  malformed_json: { status: 400, title: 'Malformed JSON' },
  json_too_deep: { status: 400, title: 'JSON nested too deep' },
  invalid_body: { status: 400, title: 'Invalid body' },
  invalid_document: { status: 400, title: 'Invalid request document' },
  invalid_key: { status: 400, title: 'Invalid row key' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  plan_required: { status: 403, title: 'Pro plan required' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  row_not_found: { status: 404, title: 'Row not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  not_acceptable: { status: 406, title: 'Not acceptable' },
  request_timeout: { status: 408, title: 'Request timeout' },
  conflict: { status: 409, title: 'Conflict' },
  slug_taken: { status: 409, title: 'Slug taken' },
  type_mismatch: { status: 409, title: 'Type mismatch' },
  id_mismatch: { status: 409, title: 'Id mismatch' },
  invalid_state: { status: 409, title: 'Invalid state' },
  row_exists: { status: 409, title: 'Row exists' },
  link_expired: { status: 410, title: 'Link expired' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  uri_too_long: { status: 414, title: 'URI too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation_failed: { status: 422, title: 'Validation failed' },
  invalid_graph: { status: 422, title: 'Invalid graph' },
  not_supported: { status: 422, title: 'Not supported yet' },
  unsupported_document: { status: 422, title: 'Unsupported document' },
  invalid_import: { status: 422, title: 'Invalid document' },
  row_cap_exceeded: { status: 422, title: 'Row cap exceeded' },
  schema_violated_by_rows: { status: 422, title: 'Schema violated by rows' },
  rate_limited: { status: 429, title: 'Too many requests' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  internal_error: { status: 500, title: 'Internal error' },
  webhook_run_failed: { status: 500, title: 'Workflow run failed' },
  provider_error: { status: 502, title: 'Model provider error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  provider_unavailable: { status: 503, title: 'Model provider unavailable' },
  webhook_timeout: { status: 504, title: 'Webhook response timeout' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
