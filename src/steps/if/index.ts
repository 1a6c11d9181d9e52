import { defineStep } from '../define-step.js';
import { orExpression } from '../expression-schema.js';

export const IF_PORTS = ['true', 'false'] as const;

export const ifStep = defineStep({
  slug: 'if',
  name: 'If',
  description: 'Sends its input down the true or the false branch depending on a condition.',
  docs: `Chooses one of two branches. Only the nodes after the taken port run; the other branch
is skipped.

**Config**

- \`condition\` (required): one \`{{ … }}\` expression, such as
  \`"{{ trigger.body.amount > 100 }}"\`, or a fixed \`true\`/\`false\`. The result counts as true
  or false by JSONata's \`$boolean\` rules: \`false\`, \`null\`, \`0\`, \`""\`, an empty array, an
  empty object and a missing value are false; an array is true when any of its members is.

**Output**

The input, unchanged, on the \`true\` or the \`false\` port.`,
  categories: ['decide'],
  icon: 'split',
  iconColor: '#EA580C',
  trigger: false,
  ports: { in: ['in'], out: [...IF_PORTS] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['condition'],
    properties: {
      // A plain string would always count as true, so only a whole expression is accepted.
      condition: orExpression({ type: 'boolean' }),
    },
  },
  defaultConfig: {},
  outputSchema: null,
  sortOrder: 90,
  canvasVisible: true,
});
