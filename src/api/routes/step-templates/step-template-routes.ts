import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../../api-context.js';
import { sendList } from '../../jsonapi/respond.js';
import { ERROR_RESPONSE_SCHEMA, LIST_QUERY_SCHEMA, listDocumentSchema } from '../../jsonapi/resource-schemas.js';
import { selectStepTemplates } from '../../../store/step-template-repository.js';
import { stepTemplateResource } from './step-template-resource.js';

/** `GET /step-templates`: the catalog, readable by any valid token (any plan), by sort_order. */
export async function stepTemplateRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  app.get(
    '/step-templates',
    {
      config: { anyPlan: true },
      schema: {
        tags: ['Step templates'],
        summary: 'The step catalog, ordered by sort_order',
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(stepTemplateResource), 400: ERROR_RESPONSE_SCHEMA, 401: ERROR_RESPONSE_SCHEMA },
      },
    },
    async (request, reply) =>
      sendList(request, reply, ctx, {
        definition: stepTemplateResource,
        base: selectStepTemplates(ctx.db),
        path: '/step-templates',
        scoped: false,
      }),
  );
}
