import type { PlatformContext } from './platform-context.js';
import type { PlatformEndpoint } from './platform-routes.js';
import { slackEventsEndpoint } from './slack/slack-events.js';
import { slackOAuthCallback } from './slack/slack-oauth-callback.js';
import type { SlackOAuth } from '../services/apps/slack-oauth.js';
import { mailgunEndpoints } from './email/mailgun-endpoint.js';
import { postmarkEndpoint } from './email/postmark-endpoint.js';
import { twilioEndpoint } from './twilio/twilio-endpoint.js';

/** Every provider's endpoint under `/webhooks/inbound`. Add a provider here. */
export function buildPlatformEndpoints(ctx: PlatformContext & { slackOAuth: SlackOAuth }): PlatformEndpoint[] {
  return [
    slackEventsEndpoint(ctx),
    slackOAuthCallback(ctx.slackOAuth),
    twilioEndpoint(ctx),
    ...mailgunEndpoints(ctx),
    postmarkEndpoint(ctx),
  ];
}
