import type { FastifyInstance } from 'fastify';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Schema = Record<string, unknown>;
interface Media {
  schema?: Schema;
}
interface Operation {
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { content?: Record<string, Media> }>;
}
type Document = { paths: Record<string, Record<string, Operation>> };

/** What one answer was: enough to check it against the document. */
export interface Exchange {
  method: string;
  /** The route's pattern as Fastify knows it (`/api/v1/workflows/:id`). */
  route: string;
  url: string;
  status: number;
  contentType: string | undefined;
  /** The answer's bytes when they were sent whole (not a stream). */
  body: string | undefined;
  requestType: string | undefined;
  requestBody: unknown;
}

const escapeToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1');
const mediaTypeOf = (header: string | undefined) => header?.split(';')[0]!.trim().toLowerCase();
/** A JSON document's media type (not NDJSON, which is lines of JSON). */
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json');

function mediaEntry(content: Record<string, Media>, type: string): [string, Media] | undefined {
  const [major] = type.split('/');
  return (Object.entries(content).find(([key]) => key === type) ??
    Object.entries(content).find(([key]) => key === `${major}/*`) ??
    Object.entries(content).find(([key]) => key === '*/*')) as [string, Media] | undefined;
}

/**
 * The contract test: every answer a test receives from the app is checked against the app's own
 * OpenAPI document (the operation exists, the status is declared, the media type is declared,
 * the body is valid against the declared schema), and every request body the app accepted (2xx)
 * is checked against the declared request body. The schemas are compiled once per document.
 */
export class OpenApiContract {
  private readonly ajv = new Ajv2020.default({ strict: false, allErrors: true, validateFormats: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Document) {
    addFormats.default(this.ajv);
    this.ajv.addSchema(document as unknown as Schema, 'openapi');
  }

  private validate(pointer: string, value: unknown): string[] {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.getSchema(`openapi#${pointer}`);
      if (!validate) return [`the document has no schema at ${pointer}`];
      this.validators.set(pointer, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  }

  check(exchange: Exchange): string[] {
    const path = exchange.route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const method = exchange.method.toLowerCase();
    const operation = this.document.paths[path]?.[method];
    if (!operation) return [`${method.toUpperCase()} ${path} is not in the document`];
    const base = `/paths/${escapeToken(path)}/${method}`;
    const violations: string[] = [];
    const response = operation.responses?.[String(exchange.status)];
    if (!response) return [`status ${exchange.status} is not declared (declared: ${Object.keys(operation.responses ?? {}).join(', ')})`];
    const type = mediaTypeOf(exchange.contentType);
    const empty = exchange.body === undefined ? false : exchange.body.length === 0;
    if (!response.content) {
      if (!empty && exchange.body !== undefined) violations.push(`status ${exchange.status} declares no content but ${type} was sent`);
    } else if (!type) {
      if (!empty) violations.push(`status ${exchange.status} answered a body with no Content-Type`);
    } else {
      const entry = mediaEntry(response.content, type);
      if (!entry) {
        violations.push(`status ${exchange.status} declares ${Object.keys(response.content).join(', ')}, not ${type}`);
      } else if (entry[1].schema && exchange.body !== undefined && isJson(type)) {
        const pointer = `${base}/responses/${exchange.status}/content/${escapeToken(entry[0])}/schema`;
        violations.push(...this.validate(pointer, JSON.parse(exchange.body)).map((v) => `answer ${exchange.status} ${v}`));
      }
    }
    const requestType = mediaTypeOf(exchange.requestType);
    const accepted = exchange.status >= 200 && exchange.status < 300;
    if (accepted && requestType && isJson(requestType) && exchange.requestBody !== undefined && typeof exchange.requestBody === 'object') {
      const content = operation.requestBody?.content;
      const entry = content ? mediaEntry(content, requestType) : undefined;
      if (!entry) violations.push(`the request body (${requestType}) was accepted, but the document declares none of that type`);
      else if (entry[1].schema) {
        const pointer = `${base}/requestBody/content/${escapeToken(entry[0])}/schema`;
        violations.push(...this.validate(pointer, exchange.requestBody).map((v) => `accepted request body ${v}`));
      }
    }
    return violations;
  }
}

let shared: { text: string; contract: OpenApiContract } | null = null;

function contractOf(app: FastifyInstance): OpenApiContract {
  const document = app.swagger() as unknown as Document;
  const text = JSON.stringify(document);
  if (shared?.text !== text) shared = { text, contract: new OpenApiContract(JSON.parse(text) as Document) };
  return shared.contract;
}

/**
 * Checks every answer of `app` against its document from an onSend hook and collects what does
 * not hold; the test client asserts the list is empty after each request and when the app closes.
 */
export function watchContract(app: FastifyInstance): string[] {
  const violations: string[] = [];
  let contract: OpenApiContract | undefined;
  app.addHook('onSend', (request, reply, payload, done) => {
    const route = request.routeOptions.url;
    const schema = request.routeOptions.schema as { hide?: boolean } | undefined;
    // A client that went away mid-body receives nothing: what the server would have answered is moot.
    const gone = request.raw.destroyed && !request.raw.complete;
    if (route !== undefined && !schema?.hide && !gone && request.method !== 'HEAD' && request.method !== 'OPTIONS') {
      const body =
        typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload == null ? '' : undefined;
      const exchange: Exchange = {
        method: request.method,
        route,
        url: request.url,
        status: reply.statusCode,
        contentType: reply.getHeader('content-type') as string | undefined,
        body,
        requestType: request.headers['content-type'],
        requestBody: request.body,
      };
      contract ??= contractOf(app);
      for (const violation of contract.check(exchange)) {
        // The answer's first bytes go with it: a random request that found drift is understood from the log alone.
        violations.push(`${request.method} ${request.url} -> ${reply.statusCode}: ${violation} (answered ${(body ?? '').slice(0, 300)})`);
      }
    }
    done(null, payload);
  });
  return violations;
}
