import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, titleOf, type ErrorItem } from '../../errors/app-error.js';
import { ERROR_CODES, type ErrorCode } from '../../errors/error-codes.js';
import { escapePointerToken } from '../../lib/json-pointer.js';
import { lingerOnClose } from './linger-close.js';

export const JSONAPI_MEDIA_TYPE = 'application/vnd.api+json';

export interface ErrorDocument {
  errors: {
    id?: string;
    status: string;
    code: string;
    title: string;
    detail: string;
    source?: Record<string, string>;
    meta?: Record<string, unknown>;
  }[];
  jsonapi: { version: '1.0' };
}

/** Renders error items as the JSON:API error document of DESIGN.md. */
export function errorDocument(status: number, items: ErrorItem[], requestId?: string, fallbackTitle?: string): ErrorDocument {
  return {
    errors: items.map((item, index) => ({
      ...(requestId ? { id: items.length > 1 ? `${requestId}.${index + 1}` : requestId } : {}),
      status: String(status),
      code: item.code,
      title: titleOf(item.code, fallbackTitle),
      detail: item.detail,
      ...(item.source ? { source: item.source as Record<string, string> } : {}),
      ...(item.meta ? { meta: item.meta } : {}),
    })),
    jsonapi: { version: '1.0' },
  };
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  431: 'headers_too_large',
  503: 'service_unavailable',
};

/** Turns a framework validation error into items pointing at the parameter or body member. */
function validationItems(error: FastifyError): ErrorItem[] {
  const context = error.validationContext;
  return (error.validation ?? []).map((issue) => {
    const params = issue.params as Record<string, unknown>;
    const extra =
      typeof params.additionalProperty === 'string'
        ? `/${escapePointerToken(params.additionalProperty)}`
        : typeof params.missingProperty === 'string'
          ? `/${escapePointerToken(params.missingProperty)}`
          : '';
    const path = `${issue.instancePath}${extra}`;
    // Pointer segments are escaped (RFC 6901); parameter names are shown as sent.
    const segments = path
      .split('/')
      .filter(Boolean)
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
    if (context === 'querystring') {
      const parameter =
        segments.length === 0
          ? 'query'
          : segments[0] +
            segments
              .slice(1)
              .map((s) => `[${s}]`)
              .join('');
      const detail =
        typeof params.additionalProperty === 'string'
          ? `unknown query parameter "${parameter}"`
          : `query parameter ${parameter} ${issue.message ?? 'is invalid'}`;
      return { code: 'invalid_query_parameter', detail, source: { parameter } };
    }
    if (context === 'body') {
      const detail =
        typeof params.additionalProperty === 'string'
          ? `unknown member "${params.additionalProperty}"`
          : `${path || 'the body'} ${issue.message ?? 'is invalid'}`;
      return { code: 'invalid_document', detail, source: { pointer: path } };
    }
    return {
      code: 'bad_request',
      detail: `${context ?? 'request'}${path} ${issue.message ?? 'is invalid'}`,
      source: { parameter: segments[0] ?? String(context) },
    };
  });
}

/** Maps any thrown value to a status and items; nothing internal (stack, SQL) leaves here. */
export function describeError(error: unknown): { status: number; items: ErrorItem[]; headers: Record<string, string> } {
  if (error instanceof AppError) return { status: error.status, items: error.items, headers: error.headers };
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) return { status: 400, items: validationItems(fastifyError), headers: {} };
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return {
        status: 415,
        items: [{ code: 'unsupported_media_type', detail: `request bodies must be sent as ${JSONAPI_MEDIA_TYPE}` }],
        headers: {},
      };
    }
    if (
      status === 400 &&
      (fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError || /JSON/i.test(fastifyError.message))
    ) {
      return {
        status: 400,
        items: [{ code: 'malformed_json', detail: 'the request body is not valid JSON', source: { pointer: '' } }],
        headers: {},
      };
    }
    const code = STATUS_CODES[status] ?? 'bad_request';
    const detail = status === 413 ? 'the request body is too large' : fastifyError.message || ERROR_CODES[code].title;
    return { status, items: [{ code, detail }], headers: {} };
  }
  return {
    status: 500,
    items: [{ code: 'internal_error', detail: 'an internal error occurred; the request id identifies it in the server log' }],
    headers: {},
  };
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const { status, items, headers } = describeError(error);
  // Items may carry finer codes (a graph rule); their title falls back to the error's own.
  const fallbackTitle = error instanceof AppError ? ERROR_CODES[error.code].title : undefined;
  if (status >= 500) {
    request.log.error({ err: error }, 'request failed');
    if (process.env.SY_DEBUG) console.error(error);
  }
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  // A body refused before it was all read (413, a parse error, or a streamed body's route that
  // refused the request first: the restore's 406, 400 or 409) is left unread: the connection is
  // closed after the answer, lingering so the client can finish sending and read it. Kept open,
  // a client still uploading would hold it (and a server's shutdown) with a body nobody reads.
  if (!request.raw.complete && (reply.getHeader('connection') === 'close' || hasBody(request))) {
    reply.header('connection', 'close');
    lingerOnClose(request.raw.socket);
  }
  // Bytes, not a string: Fastify appends a charset to string payloads, and replies raised by the
  // router (framework-errors.ts) skip the onSend hook that strips it.
  return reply
    .code(status)
    .type(JSONAPI_MEDIA_TYPE)
    .send(Buffer.from(JSON.stringify(errorDocument(status, items, request.id, fallbackTitle))));
}
