import { defineStep } from '../define-step.js';
import { orExpression, stringMapSchema } from '../expression-schema.js';

export const respondToWebhookStep = defineStep({
  slug: 'respond_to_webhook',
  name: 'Respond to Webhook',
  description: 'Sends the HTTP response to the caller of a webhook in respond_step mode.',
  docs: `Answers the request that started the execution, when its webhook uses
\`response_mode: "respond_step"\`. The execution goes on after the response is sent.

**Config**

- \`status\`: HTTP status, 100 to 599 (default 200), or one \`{{ … }}\` expression yielding it.
- \`headers\`: an object of strings, or one expression yielding it.
- \`body\`: any JSON value; a string that is one expression sends its result.`,
  categories: ['act'],
  icon: 'reply',
  iconColor: '#9333EA',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: orExpression({ type: 'integer', minimum: 100, maximum: 599 }),
      headers: orExpression(stringMapSchema),
      body: {},
    },
  },
  defaultConfig: { status: 200, headers: {} },
  outputSchema: null,
  sortOrder: 60,
  canvasVisible: true,
});
