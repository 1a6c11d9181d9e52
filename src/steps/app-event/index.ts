import { defineStep } from '../define-step.js';

/** Slack event types an `app_event` trigger listens to unless its config says otherwise. */
export const DEFAULT_APP_EVENT_TYPES = ['message', 'app_mention'] as const;

/**
 * The trigger of chat-app events. Deliveries arrive at the platform endpoint of the provider
 * (`{base_url}/webhooks/inbound/slack`), are verified with the app's signing secret, routed to
 * the workspace that installed the team, and matched against these triggers (platform/slack).
 */
export const appEventStep = defineStep({
  slug: 'app_event',
  name: 'Chat app event',
  description: 'Starts the workflow when a message or mention reaches the Slack app installed in this workspace.',
  docs: `Starts an execution for every event of the workspace's Slack installation that matches
the config, while the workflow is active. There is no per-workflow URL or secret: the operator
sets the Slack app up once (\`switchyard app set slack\`), a workspace installs it, and its
events reach \`{base_url}/webhooks/inbound/slack\`, are verified with the app's signing secret and
routed by team id (docs/triggers.md).

Deliveries are deduplicated by Slack's \`event_id\`; a message Slack delivers both as \`message\`
and as \`app_mention\` starts each workflow once. The bot's own messages never start anything.

**Config**

- \`event_types\`: event types to start on (default \`["message", "app_mention"]\`); edits and
  deletions (\`message_changed\`, \`message_deleted\`) only when listed.
- \`channels\`: channel ids (\`C…\`, \`D…\`) to listen in; empty or absent: every channel.
- \`only_mentioned\`: only events that mention the bot or are direct messages (default false).
- \`bot_threads_only\`: only replies in threads the bot posted in (default false).
- \`include_bots\`: also other bots' messages (default false; the workflow's own bot is always dropped).

**Output**

\`{payload, event}\`: \`payload\` holds \`text\`, \`user\`, \`channel\`, \`channel_type\`, \`ts\`,
\`thread_ts\`, \`mentioned\`, \`bot_thread\`, \`event_id\`, \`event_type\`, \`team_id\`; \`event\` is
Slack's event object as delivered. In expressions: \`{{ trigger.payload.text }}\`.`,
  categories: ['start'],
  icon: 'message-circle',
  iconColor: '#4A154B',
  trigger: true,
  ports: { in: [], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      event_types: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, minItems: 1, maxItems: 50, uniqueItems: true },
      channels: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 500, uniqueItems: true },
      only_mentioned: { type: 'boolean' },
      bot_threads_only: { type: 'boolean' },
      include_bots: { type: 'boolean' },
    },
  },
  defaultConfig: { event_types: [...DEFAULT_APP_EVENT_TYPES], only_mentioned: false, bot_threads_only: false, include_bots: false },
  outputSchema: {
    type: 'object',
    required: ['payload', 'event'],
    properties: {
      payload: {
        type: 'object',
        properties: {
          text: { type: ['string', 'null'] },
          user: { type: ['string', 'null'] },
          channel: { type: ['string', 'null'] },
          channel_type: { type: ['string', 'null'] },
          ts: { type: ['string', 'null'] },
          thread_ts: { type: ['string', 'null'] },
          mentioned: { type: 'boolean' },
          bot_thread: { type: 'boolean' },
          event_id: { type: 'string' },
          event_type: { type: 'string' },
          team_id: { type: 'string' },
        },
      },
      event: { type: 'object' },
    },
  },
  sortOrder: 130,
  canvasVisible: true,
});
