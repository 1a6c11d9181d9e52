import type { PlatformContext } from './platform-context.js';
import type { PlatformEndpoint } from './platform-routes.js';
import { slackEventsEndpoint } from './slack/slack-events.js';
import { slackOAuthCallback } from './slack/slack-oauth-callback.js';
import type { SlackOAuth } from '../services/apps/slack-oauth.js';

/** Every provider's endpoint under `/webhooks/inbound`. Add a provider here. */
export function buildPlatformEndpoints(ctx: PlatformContext & { slackOAuth: SlackOAuth }): PlatformEndpoint[] {
  return [slackEventsEndpoint(ctx), slackOAuthCallback(ctx.slackOAuth)];
}
