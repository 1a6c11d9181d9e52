import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { DOCS_BRANDING } from './docs-branding.js';
import { exactDocument } from './openapi-exact.js';
import { JSONAPI_MEDIA_TYPE } from './error-document.js';
import { WEBHOOK_ERROR_SCHEMA, WEBHOOK_PATH_ITEM } from './openapi-webhooks.js';
import { SERVICE_DOCUMENT_SCHEMA, SERVICE_FOLDER_DOCUMENT_SCHEMA } from '../routes/workflows/document-schemas.js';

type Schema = Record<string, unknown>;

/** GET /api/v1/open_api: this document, described by the OpenAPI 3.1 specification itself. */
export const OPEN_API_RESPONSE = {
  description: 'the OpenAPI 3.1 document',
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' }, components: { type: 'object' } },
  additionalProperties: true,
} as const;

const inContent = (mediaType: string, schema: Schema) => {
  const { description, ...rest } = schema;
  return { ...(description ? { description } : {}), content: { [mediaType]: { schema: rest } } };
};

/**
 * Declares the media types the API really uses: request bodies are JSON:API, answers are JSON:API
 * except the plain-JSON action routes' success answers, and errors always are.
 */
function declareMediaTypes(schema: Schema | undefined, url: string, plainJson: boolean): Schema | undefined {
  if (!schema || !url.startsWith('/api/v1/')) return schema;
  const next: Schema = { ...schema };
  // A body already split by media type (document ingest: JSON:API or raw text) is kept as it is.
  if (schema.body && !(schema.body as Schema).content) next.body = inContent(JSONAPI_MEDIA_TYPE, schema.body as Schema);
  if (schema.response) {
    next.response = Object.fromEntries(
      Object.entries(schema.response as Record<string, Schema>).map(([status, response]) => {
        if (status === '204' || response.content) return [status, response];
        const success = status.startsWith('2');
        return [status, inContent(success && plainJson ? 'application/json' : JSONAPI_MEDIA_TYPE, response)];
      }),
    );
  }
  return next;
}

/**
 * The OpenAPI 3.1 document is generated from the route schemas (3.1 because its schemas are
 * plain JSON Schema, so nullable types and the resource schemas need no translation). The
 * interactive reference at /api/docs is served from the swagger-ui assets bundled in the
 * package, so it works with no internet, under the product's own name and mark (docs-branding.ts).
 */
export async function registerOpenApi(
  app: FastifyInstance,
  baseUrl: string,
  extraPaths: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Switchyard API',
        version: '1.0.0',
        description:
          'JSON:API interface of Switchyard. Every /api/v1 call needs `Authorization: Bearer <token>`; request bodies are `application/vnd.api+json`. Action routes (PUT /graph, /run) answer plain JSON. Errors are JSON:API error documents.',
      },
      servers: [{ url: baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API token (sy_…) pinned to one workspace, scope read or build' },
          metricsToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'SWITCHYARD_METRICS_TOKEN, required by /metrics only when it is set',
          },
        },
        schemas: {
          WebhookError: WEBHOOK_ERROR_SCHEMA,
          ServiceDocument: structuredClone(SERVICE_DOCUMENT_SCHEMA) as Schema,
          ServiceFolderDocument: structuredClone(SERVICE_FOLDER_DOCUMENT_SCHEMA) as Schema,
        },
      },
      security: [{ bearer: [] }],
      tags: [
        { name: 'Token' },
        { name: 'Workflows' },
        { name: 'Folders' },
        { name: 'Executions' },
        {
          name: 'Stores',
          description: 'workspace data tables: the store resource, its rows, the change feed and the deletions feed (docs/stores.md)',
        },
        { name: 'Step templates' },
        {
          name: 'Connections',
          description: 'model-provider credentials (OpenAI, Anthropic, OpenAI-compatible servers) for embedders, summaries and agents',
        },
        { name: 'Knowledge bases', description: 'documents chunked, embedded and searchable (docs/knowledge.md)' },
        { name: 'Memories', description: 'conversation memory: window, compaction, recall (docs/agents.md)' },
        { name: 'Webhooks', description: 'webhook endpoint actions of the API: bearer rotation, sample capture' },
        { name: 'Inbound webhooks', description: 'the endpoints senders deliver to (docs/webhooks.md)' },
        { name: 'Approvals', description: 'the signed one-time links of waiting approval steps (docs/run-control.md)' },
        {
          name: 'Platform endpoints',
          description:
            "one endpoint per provider (Slack, Twilio, Mailgun, Postmark): verified with the provider app's secret, routed by account id (docs/triggers.md)",
        },
        {
          name: 'App installations',
          description: 'provider accounts linked to this workspace; created by the operator or the OAuth install, never by a token',
        },
        { name: 'Health' },
      ],
    },
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapiObject } = document;
      const paths = {
        ...openapiObject.paths,
        '/webhooks/{webhook_id}': structuredClone(WEBHOOK_PATH_ITEM),
        ...structuredClone(extraPaths),
      };
      return exactDocument({ ...openapiObject, paths } as Schema) as typeof openapiObject;
    },
    transform: ({ schema, url, route }) => ({
      schema: declareMediaTypes(schema as Schema, url, route.config?.plainJson === true) as never,
      url,
    }),
  });
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    staticCSP: true,
    ...DOCS_BRANDING,
  });
}
