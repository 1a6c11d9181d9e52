import type { Metrics } from '../observability/metrics.js';
import type { AppService } from '../services/apps/app-service.js';
import type { PlatformDirectory } from './platform-directory.js';
import type { PlatformStartContext } from './platform-start.js';
import type { PlatformTriggers } from './platform-triggers.js';

/** What every provider's endpoint gets from the composition root. */
export interface PlatformContext extends PlatformStartContext {
  directory: PlatformDirectory;
  triggers: PlatformTriggers;
  /** Counts verified deliveries by outcome; null: not counted. */
  metrics: Metrics | null;
  /** SWITCHYARD_BASE_URL: the public URL providers sign (Twilio) and redirect to (OAuth). */
  baseUrl: string;
  apps: AppService;
  /** SWITCHYARD_SLACK_API_URL (oauth.v2.access, auth.test). */
  slackApiUrl: string;
  /** SWITCHYARD_EMAIL_ATTACHMENT_MAX_BYTES: larger email attachments are listed, their content not kept. */
  emailAttachmentMaxBytes?: number;
}
