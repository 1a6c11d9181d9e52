import { defineStep } from '../define-step.js';

/** Slack refuses longer texts (msg_too_long); refused at save time instead. */
export const MAX_CHAT_TEXT = 40_000;

export const chatReplyStep = defineStep({
  slug: 'chat_reply',
  name: 'Chat reply',
  description: "Posts a message to a Slack channel or thread as the workspace's installed bot.",
  docs: `Posts a message with Slack's \`chat.postMessage\`, using the bot token of the workspace's
Slack installation (docs/triggers.md). The posted message's thread is recorded, so replies in it
reach \`app_event\` triggers with \`bot_thread: true\`; the bot's own messages never start a run.

**Config** (expressions allowed)

- \`channel\` (required): a channel id, e.g. \`"{{ trigger.payload.channel }}"\`.
- \`text\` (required): the message text (Slack mrkdwn), at most 40000 characters.
- \`thread_ts\`: the thread to reply in, e.g. \`"{{ trigger.payload.thread_ts ? trigger.payload.thread_ts : trigger.payload.ts }}"\`; absent or null: a new message.
- \`team_id\`: which installation posts; default: the trigger's \`payload.team_id\`, else the
  workspace's only Slack installation.

**Output**

\`{channel, ts, thread_ts, team_id}\` of the posted message.

**Failures**

Slack's rate limit (429, \`ratelimited\`) waits for its Retry-After; server errors and network
failures are retried per the node's retry policy; anything else Slack refuses (\`channel_not_found\`,
\`not_in_channel\`, \`invalid_auth\`, \`missing_scope\`, …) fails without retries, with Slack's
error code in the step error's details.`,
  categories: ['act'],
  icon: 'send',
  iconColor: '#4A154B',
  trigger: false,
  effects: true,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['channel', 'text'],
    properties: {
      channel: { type: 'string', minLength: 1, maxLength: 200 },
      text: { type: 'string', minLength: 1, maxLength: MAX_CHAT_TEXT },
      thread_ts: { type: ['string', 'null'] },
      team_id: { type: 'string', minLength: 1, maxLength: 100 },
    },
  },
  defaultConfig: {},
  outputSchema: {
    type: 'object',
    required: ['channel', 'ts', 'thread_ts', 'team_id'],
    properties: {
      channel: { type: 'string' },
      ts: { type: 'string' },
      thread_ts: { type: ['string', 'null'] },
      team_id: { type: 'string' },
    },
  },
  sortOrder: 140,
  canvasVisible: true,
});
