import { defineStep } from '../define-step.js';

/** How long a delivery waits for a respond step by default: Twilio gives up on a webhook after 15 s. */
export const DEFAULT_SMS_REPLY_TIMEOUT_MS = 10_000;
export const MAX_SMS_REPLY_TIMEOUT_MS = 14_000;

/**
 * The trigger of inbound SMS. Deliveries arrive at the platform endpoint of the provider
 * (`{base_url}/webhooks/inbound/twilio`), are verified with the installation's auth token,
 * routed to the workspace that installed the AccountSid, and matched against these triggers.
 */
export const smsStep = defineStep({
  slug: 'sms',
  name: 'SMS received',
  description: 'Starts the workflow when a text message reaches a Twilio number of the account installed in this workspace.',
  docs: `Starts an execution for every SMS (or MMS) that Twilio delivers for the workspace's
installed account, while the workflow is active. There is no per-workflow URL: every number of
the account points its "A message comes in" webhook at \`{base_url}/webhooks/inbound/twilio\`;
deliveries are verified with the installation's auth token and routed by \`AccountSid\`
(docs/triggers.md). Redeliveries of one \`MessageSid\` start nothing new.

A \`respond_to_webhook\` step answers the sender: its \`body\` (a string, or \`{text}\`) is sent
back as the reply SMS, within \`reply_timeout_ms\`; otherwise no reply is sent.

**Config**

- \`numbers\`: receiving numbers in E.164 (\`+15550100\`); empty or absent: every number.
- \`reply_timeout_ms\`: how long the delivery waits for a respond step (default 10000, at most 14000).

**Output**

\`{payload, event}\`: \`payload\` holds \`from\`, \`to\`, \`text\`, \`message_id\`, \`media\`
(\`[{url, content_type}]\`) and \`account_id\`; \`event\` holds every parameter Twilio posted.
In expressions: \`{{ trigger.payload.text }}\`.`,
  categories: ['start'],
  icon: 'message-square',
  iconColor: '#F22F46',
  trigger: true,
  ports: { in: [], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      numbers: { type: 'array', items: { type: 'string', pattern: '^\\+[1-9][0-9]{1,14}$' }, maxItems: 500, uniqueItems: true },
      reply_timeout_ms: { type: 'integer', minimum: 0, maximum: MAX_SMS_REPLY_TIMEOUT_MS },
    },
  },
  defaultConfig: { reply_timeout_ms: DEFAULT_SMS_REPLY_TIMEOUT_MS },
  outputSchema: {
    type: 'object',
    required: ['payload', 'event'],
    properties: {
      payload: {
        type: 'object',
        properties: {
          from: { type: 'string' },
          to: { type: 'string' },
          text: { type: 'string' },
          message_id: { type: 'string' },
          media: {
            type: 'array',
            items: { type: 'object', properties: { url: { type: 'string' }, content_type: { type: ['string', 'null'] } } },
          },
          account_id: { type: 'string' },
        },
      },
      event: { type: 'object' },
    },
  },
  sortOrder: 134,
  canvasVisible: true,
});
