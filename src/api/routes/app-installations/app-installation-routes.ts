import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { parseFields, selectedAttributes } from '../../jsonapi/fields.js';
import { rejectInclude } from '../../jsonapi/include.js';
import { sendList, sendResource } from '../../jsonapi/respond.js';
import { toResourceObject } from '../../jsonapi/serialize.js';
import {
  actionBodySchema,
  ERROR_RESPONSE_SCHEMA,
  ID_PARAMS_SCHEMA,
  LIST_QUERY_SCHEMA,
  listDocumentSchema,
  SINGLE_QUERY_SCHEMA,
  singleDocumentSchema,
} from '../../jsonapi/resource-schemas.js';
import { AppInstallationRepository, type AppInstallationRow } from '../../../store/app-installation-repository.js';
import { actorOf } from '../workflows/workflow-routes.js';
import { appInstallationResource } from './app-installation-resource.js';
import { STATE_TTL_MS } from '../../../services/apps/slack-oauth.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
const errors = { 400: ERROR_RESPONSE_SCHEMA, 401: ERROR_RESPONSE_SCHEMA, 403: ERROR_RESPONSE_SCHEMA, 404: ERROR_RESPONSE_SCHEMA };
const tags = ['App installations'];

/**
 * `/app-installations`: a workspace lists, reads and removes its installations. There is no
 * create: a workspace token must never claim a provider account id (that would route another
 * workspace's messages to it). Installations come from the operator CLI or the OAuth flow.
 */
export async function appInstallationRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const present = (request: FastifyRequest, row: AppInstallationRow) => {
    const query = request.query as { fields?: unknown; include?: unknown };
    rejectInclude(query.include, appInstallationResource);
    const fields = parseFields(query.fields, [appInstallationResource]);
    return toResourceObject(
      appInstallationResource,
      row as unknown as Record<string, unknown>,
      selectedAttributes(appInstallationResource, fields),
      apiUrl(ctx, `/app-installations/${row.id}`),
    );
  };

  app.get(
    '/app-installations',
    {
      schema: {
        tags,
        summary: 'List the provider app installations of this workspace, oldest first',
        querystring: LIST_QUERY_SCHEMA,
        response: { 200: listDocumentSchema(appInstallationResource), ...errors },
      },
    },
    async (request, reply) =>
      sendList(request, reply, ctx, {
        definition: appInstallationResource,
        base: new AppInstallationRepository(ctx.db, request.auth.workspace.id).selectBase(),
        path: '/app-installations',
      }),
  );

  app.post(
    '/app-installations/slack/authorize',
    {
      schema: {
        tags,
        summary:
          'Start a Slack OAuth v2 install for this workspace: answers the Slack authorize URL to open (signed for this workspace, good for 10 minutes)',
        body: actionBodySchema(),
        response: {
          200: {
            type: 'object',
            required: ['url'],
            properties: { url: { type: 'string' }, redirect_uri: { type: 'string' }, expires_in: { type: 'integer' } },
          },
          ...errors,
          409: ERROR_RESPONSE_SCHEMA,
        },
      },
      config: { plainJson: true },
    },
    async (request, reply) => {
      const url = await ctx.slackOAuth.authorizeUrl(request.auth.workspace.id);
      return reply.type('application/json').send({ url, redirect_uri: ctx.slackOAuth.redirectUri, expires_in: STATE_TTL_MS / 1000 });
    },
  );

  app.get(
    '/app-installations/:id',
    {
      schema: {
        tags,
        summary: 'Read an installation (never its credentials)',
        params: ID_PARAMS_SCHEMA,
        querystring: SINGLE_QUERY_SCHEMA,
        response: { 200: singleDocumentSchema(appInstallationResource), ...errors },
      },
    },
    async (request: IdRequest, reply) =>
      sendResource(reply, present(request, await ctx.apps.getInstallation(actorOf(request), request.params.id))),
  );

  app.delete(
    '/app-installations/:id',
    {
      schema: {
        tags,
        summary: "Remove an installation: the account's events are dropped from then on",
        params: ID_PARAMS_SCHEMA,
        response: { 204: { type: 'null', description: 'removed' }, ...errors },
      },
    },
    async (request: IdRequest, reply) => {
      await ctx.apps.removeInstallation(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
