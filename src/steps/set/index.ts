import { defineStep } from '../define-step.js';
import { orExpression } from '../expression-schema.js';

export const setStep = defineStep({
  slug: 'set',
  name: 'Set',
  description: 'Builds an object from fixed values and expressions and passes it on.',
  docs: `Shapes data for the next steps: each field of \`values\` becomes a field of the output.
Values may be any JSON; a string that is one \`{{ … }}\` expression keeps the result's type
(\`"{{ trigger.body.items }}"\` stays an array), and expressions inside a longer string are
interpolated (\`"Order {{ trigger.body.id }}"\`).

**Config**

- \`values\`: an object whose values may hold expressions, or one expression yielding an
  object. Default \`{}\`.

**Output**

The \`values\` object with every expression evaluated. The input is not merged in; use
\`"{{ input }}"\` or \`"{{ input.field }}"\` to carry parts of it along.`,
  categories: ['transform'],
  icon: 'pencil',
  iconColor: '#0891B2',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      values: orExpression({ type: 'object' }),
    },
  },
  defaultConfig: { values: {} },
  outputSchema: { type: 'object' },
  sortOrder: 80,
  canvasVisible: true,
});
