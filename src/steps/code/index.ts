import { defineStep } from '../define-step.js';

export const codeStep = defineStep({
  slug: 'code',
  name: 'Code',
  description: 'Runs JavaScript in a sandbox and passes on the value it returns.',
  docs: `Runs \`code\` as the body of an async JavaScript function in a sandbox (QuickJS) with
memory, stack and time limits. The function sees \`input\` (the output of the node feeding
it), \`nodes\` (outputs of earlier nodes by node id) and \`trigger\` (the trigger payload), and
nothing else: no network, no file system.

**Config**

- \`code\` (required): the function body, e.g. \`return { total: input.items.length };\`.

**Output**

The JSON value the code returns. Lines written with \`console\` are kept on the step record,
not passed on.`,
  categories: ['transform'],
  icon: 'code',
  iconColor: '#475569',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['code'],
    properties: {
      code: { type: 'string', minLength: 1 },
    },
  },
  defaultConfig: { code: 'return input;' },
  outputSchema: {},
  sortOrder: 40,
  canvasVisible: true,
});
