import { defineStep } from '../define-step.js';

export { DEFAULT_EMAIL_ATTACHMENT_MAX_BYTES } from '../../config.js';

/**
 * The trigger of inbound email. Deliveries arrive at the platform endpoint of the provider
 * (`{base_url}/webhooks/inbound/mailgun` or `/postmark`), are verified, routed to the workspace
 * that installed the recipient's address or domain, and matched against these triggers.
 */
export const emailStep = defineStep({
  slug: 'email',
  name: 'Email received',
  description: 'Starts the workflow when an email reaches an address or domain installed in this workspace (Mailgun or Postmark).',
  docs: `Starts an execution for every inbound email that Mailgun or Postmark delivers for an
address or domain the workspace installed, while the workflow is active. Deliveries are verified
(Mailgun's signature, Postmark's Basic credentials) and routed by recipient: an installation for
the exact address wins over one for its domain (docs/triggers.md). One message (by
\`Message-ID\`) starts each workflow once, however many of its recipients are delivered.

Attachments up to \`SWITCHYARD_EMAIL_ATTACHMENT_MAX_BYTES\` (default 256 KiB) carry their content
as base64; larger ones are listed with their size and SHA-256, and \`content_base64\` is null.

**Config**

- \`recipients\`: addresses (\`support@example.com\`) or domains (\`example.com\`) the message was
  delivered to; empty or absent: every recipient of the installations.
- \`subject_contains\`: only messages whose subject contains this text (case-insensitive).

**Output**

\`{payload, event}\`: \`payload\` holds \`from\`, \`to\`, \`cc\` (addresses), \`subject\`, \`text\`,
\`html\`, \`message_id\`, \`in_reply_to\`, \`references\`, \`recipient\` (the delivered address) and
\`attachments\` (\`[{filename, content_type, size, sha256, content_base64}]\`); \`event\` names the
provider. In expressions: \`{{ trigger.payload.subject }}\`.`,
  categories: ['start'],
  icon: 'mail',
  iconColor: '#0EA5E9',
  trigger: true,
  ports: { in: [], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      recipients: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 320 }, maxItems: 500, uniqueItems: true },
      subject_contains: { type: 'string', minLength: 1, maxLength: 500 },
    },
  },
  defaultConfig: {},
  outputSchema: {
    type: 'object',
    required: ['payload', 'event'],
    properties: {
      payload: {
        type: 'object',
        properties: {
          from: { type: ['string', 'null'] },
          to: { type: 'array', items: { type: 'string' } },
          cc: { type: 'array', items: { type: 'string' } },
          subject: { type: 'string' },
          text: { type: ['string', 'null'] },
          html: { type: ['string', 'null'] },
          message_id: { type: ['string', 'null'] },
          in_reply_to: { type: ['string', 'null'] },
          references: { type: 'array', items: { type: 'string' } },
          recipient: { type: 'string' },
          attachments: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                filename: { type: ['string', 'null'] },
                content_type: { type: 'string' },
                size: { type: 'integer' },
                sha256: { type: 'string' },
                content_base64: { type: ['string', 'null'] },
              },
            },
          },
        },
      },
      event: { type: 'object' },
    },
  },
  sortOrder: 136,
  canvasVisible: true,
});
