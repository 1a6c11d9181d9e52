import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/**
 * The OpenAPI 3.1 document is generated from the route schemas (3.1 because its schemas are
 * plain JSON Schema, so nullable types and the resource schemas need no translation). The
 * interactive reference at /api/docs is served from the swagger-ui assets bundled in the
 * package, so it works with no internet.
 */
export async function registerOpenApi(app: FastifyInstance, baseUrl: string): Promise<void> {
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
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API token (sy_…) pinned to one workspace, scope read or build' } } },
      security: [{ bearer: [] }],
      tags: [
        { name: 'Token' },
        { name: 'Workflows' },
        { name: 'Folders' },
        { name: 'Step templates' },
        { name: 'Health' },
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { docExpansion: 'list', deepLinking: true }, staticCSP: true });
}
