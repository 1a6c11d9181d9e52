import type { PlatformContext } from './platform-context.js';
import type { PlatformEndpoint } from './platform-routes.js';

/** Every provider's endpoint under `/webhooks/inbound`. Add a provider here. */
export function buildPlatformEndpoints(_ctx: PlatformContext): PlatformEndpoint[] {
  return [];
}
