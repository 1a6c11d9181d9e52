import { defineStep } from '../define-step.js';

export const callWorkflowStep = defineStep({
  slug: 'call_workflow',
  name: 'Call Workflow',
  description: 'Runs another workflow of the workspace with an input.',
  docs: `Starts an execution of another workflow. The child's trigger payload is
\`{method: "CALL", headers: {}, query: {}, body: <input>}\`.

**Config**

- \`workflow_id\` (required): id of the workflow to run.
- \`input\`: any JSON value, or a \`{{ … }}\` expression computing it.
- \`wait\`: true (default) waits for the child to finish and passes on its output; false
  starts the child and goes on without waiting.

**Output**

The child execution's output when \`wait\` is true.`,
  categories: ['act'],
  icon: 'workflow',
  iconColor: '#0D9488',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['workflow_id'],
    properties: {
      workflow_id: { type: 'string', format: 'uuid' },
      // Any JSON value, so a string (and thus an expression) is already allowed.
      input: {},
      wait: { type: 'boolean' },
    },
  },
  defaultConfig: { wait: true },
  outputSchema: {},
  sortOrder: 50,
  canvasVisible: true,
});
