import type { FastifyReply } from 'fastify';
import { JSONAPI_MEDIA_TYPE } from '../api/plugins/error-document.js';
import { isPlainObject } from '../lib/json.js';

/**
 * The one 404 of the webhook endpoints, for an unknown id and for a workflow that is not active
 * alike: built once, with no request id in it or beside it, so the two answers are the same
 * bytes (n8n's tells an inactive workflow apart). Bytes, so no charset is appended: the router's
 * own refusals of a malformed id (framework-errors.ts) send it without the onSend hook.
 */
const NOT_FOUND_BODY = Buffer.from(
  JSON.stringify({
    errors: [{ status: '404', code: 'not_found', title: 'Not found', detail: 'no active webhook at this address' }],
    jsonapi: { version: '1.0' },
  }),
);

export function sendWebhookNotFound(reply: FastifyReply): FastifyReply {
  reply.request.omitRequestId = true;
  return reply.code(404).type(JSONAPI_MEDIA_TYPE).send(NOT_FOUND_BODY);
}

/** Response headers a respond step may not set: the server frames the answer itself. */
const FRAMING_HEADERS = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'te',
  'proxy-connection',
  'date',
]);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Sends what a respond_to_webhook step answered: its status, its headers (framing headers and
 * malformed ones dropped, values as strings without line breaks), and its body: a string as
 * text (unless a content-type header says otherwise), null as no body, anything else as JSON.
 */
export function sendStepResponse(reply: FastifyReply, response: unknown): FastifyReply {
  const answer = isPlainObject(response) ? response : {};
  const status =
    typeof answer.status === 'number' && Number.isInteger(answer.status) && answer.status >= 200 && answer.status <= 599
      ? answer.status
      : 200;
  let contentType: string | null = null;
  if (isPlainObject(answer.headers)) {
    for (const [name, raw] of Object.entries(answer.headers)) {
      if (!HEADER_NAME.test(name) || FRAMING_HEADERS.has(name.toLowerCase()) || raw === null || raw === undefined) continue;
      const value = (typeof raw === 'string' ? raw : JSON.stringify(raw)).replace(/[\r\n]+/g, ' ');
      if (name.toLowerCase() === 'content-type') contentType = value;
      else reply.header(name, value);
    }
  }
  reply.code(status);
  const body = answer.body;
  if (body === null || body === undefined) {
    if (contentType) reply.type(contentType);
    return reply.send();
  }
  if (typeof body === 'string') return reply.type(contentType ?? 'text/plain; charset=utf-8').send(body);
  return reply.type(contentType ?? 'application/json; charset=utf-8').send(JSON.stringify(body));
}

/** A `last_step` answer: the execution's output as JSON. */
export function sendOutput(reply: FastifyReply, output: unknown): FastifyReply {
  return reply
    .code(200)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(output ?? null));
}
