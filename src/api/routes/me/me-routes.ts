import type { FastifyInstance } from 'fastify';
import { ERROR_RESPONSE_SCHEMA } from '../../jsonapi/resource-schemas.js';
import { JSONAPI_MEDIA_TYPE } from '../../plugins/error-document.js';
import type { ApiContext } from '../../api-context.js';
import { apiUrl } from '../../api-context.js';

const ME_RESPONSE = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        type: { type: 'string', const: 'user' },
        id: { type: 'string', format: 'uuid' },
        attributes: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            email: { type: 'string' },
            workspace: {
              type: 'object',
              properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' }, slug: { type: 'string' } },
            },
            token: {
              type: 'object',
              properties: {
                id: { type: 'string', format: 'uuid' },
                scopes: { type: 'array', items: { type: 'string', enum: ['read', 'build'] } },
                expires_at: { type: ['string', 'null'], format: 'date-time' },
              },
            },
          },
        },
        links: { type: 'object', properties: { self: { type: 'string' } } },
      },
    },
    jsonapi: { type: 'object', properties: { version: { type: 'string' } } },
  },
};

/** `GET /me`: the user, the pinned workspace and the token's scopes and expiry. */
export async function meRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const self = apiUrl(ctx, '/me');
  app.get(
    '/me',
    {
      schema: {
        tags: ['Token'],
        summary: 'The authenticated user, the pinned workspace, and the token scopes and expiry',
        response: { 200: ME_RESPONSE, 401: ERROR_RESPONSE_SCHEMA, 403: ERROR_RESPONSE_SCHEMA },
      },
    },
    async (request, reply) => {
      const { user, workspace, tokenId, scopes, expiresAt } = request.auth;
      reply.type(JSONAPI_MEDIA_TYPE);
      return {
        data: {
          type: 'user',
          id: user.id,
          attributes: {
            name: user.name,
            email: user.email,
            workspace: { id: workspace.id, name: workspace.name, slug: workspace.slug },
            token: { id: tokenId, scopes, expires_at: expiresAt },
          },
          links: { self },
        },
        jsonapi: { version: '1.0' },
      };
    },
  );
}
