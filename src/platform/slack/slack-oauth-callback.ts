import type { SlackOAuth } from '../../services/apps/slack-oauth.js';
import type { PlatformEndpoint } from '../platform-routes.js';

/**
 * `GET {base_url}/webhooks/inbound/slack/oauth`: where Slack sends the installing user back. The
 * state (signed for one workspace, services/apps/slack-oauth.ts) is checked before the code is
 * exchanged; the answer is a short text page for the person in the browser.
 */
export function slackOAuthCallback(oauth: SlackOAuth): PlatformEndpoint {
  return {
    provider: 'slack',
    method: 'GET',
    path: '/slack/oauth',
    maxBodyBytes: 1024,
    openapi: {
      get: {
        tags: ['Platform endpoints'],
        summary: 'Slack OAuth v2 redirect: finishes an install started with POST /api/v1/app-installations/slack/authorize',
        security: [],
        parameters: ['code', 'state', 'error'].map((name) => ({ name, in: 'query', required: false, schema: { type: 'string' } })),
        responses: {
          200: { description: 'installed; a text page', content: { 'text/plain': { schema: { type: 'string' } } } },
          400: {
            description: 'a forged, altered or expired state, or Slack denied the install',
            content: { 'application/vnd.api+json': { schema: { $ref: '#/components/schemas/WebhookError' } } },
          },
          409: {
            description: 'the team is installed in another workspace',
            content: { 'application/vnd.api+json': { schema: { $ref: '#/components/schemas/WebhookError' } } },
          },
          502: {
            description: 'Slack refused the code exchange',
            content: { 'application/vnd.api+json': { schema: { $ref: '#/components/schemas/WebhookError' } } },
          },
        },
      },
    },
    handle: async (delivery, reply) => {
      const query = new URL(delivery.url, 'http://callback.invalid').searchParams;
      const row = await oauth.complete({ code: query.get('code'), state: query.get('state'), error: query.get('error') });
      delivery.log.info(
        { provider: 'slack', installation_id: row.id, workspace_id: row.workspace_id },
        'slack app installed through OAuth',
      );
      return reply
        .code(200)
        .type('text/plain; charset=utf-8')
        .send(`Slack team ${row.account_id} is now connected to this Switchyard workspace. You can close this page.`);
    },
  };
}
