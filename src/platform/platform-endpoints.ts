import type { PlatformContext } from './platform-context.js';
import type { PlatformEndpoint } from './platform-routes.js';
import { slackEventsEndpoint } from './slack/slack-events.js';

/** Every provider's endpoint under `/webhooks/inbound`. Add a provider here. */
export function buildPlatformEndpoints(ctx: PlatformContext): PlatformEndpoint[] {
  return [slackEventsEndpoint(ctx)];
}
