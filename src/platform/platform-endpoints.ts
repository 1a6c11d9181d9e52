import type { PlatformContext } from './platform-context.js';
import type { PlatformEndpoint } from './platform-routes.js';
import { mailgunEndpoint } from './email/mailgun-endpoint.js';
import { postmarkEndpoint } from './email/postmark-endpoint.js';
import { twilioEndpoint } from './twilio/twilio-endpoint.js';

/** Every provider's endpoint under `/webhooks/inbound`. Add a provider here. */
export function buildPlatformEndpoints(ctx: PlatformContext): PlatformEndpoint[] {
  return [twilioEndpoint(ctx), mailgunEndpoint(ctx), postmarkEndpoint(ctx)];
}
