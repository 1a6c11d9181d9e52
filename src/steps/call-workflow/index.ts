import { defineStep } from '../define-step.js';

export const callWorkflowStep = defineStep({
  slug: 'call_workflow',
  name: 'Call Workflow',
  description: 'Runs another workflow of the workspace with an input.',
  docs: `Starts an execution of another workflow of the workspace. The child's trigger payload is
\`{method: "CALL", headers: {}, query: {}, body: <input>}\`; the child execution records the
calling step's row as \`triggered_by_step_id\`.

An active target runs its activated snapshot. When the caller is itself a draft run, the target
runs its live canvas instead, so a workflow and the ones it calls can be tried together before
activation. A target that is unknown, in another workspace, or inactive (for a non-draft
caller) fails the step without retrying. Calls nest at most 16 levels deep; deeper runaway
recursion fails with \`call_depth_exceeded\`.

**Config**

- \`workflow_id\` (required): id of the workflow to run.
- \`input\`: any JSON value, or a \`{{ … }}\` expression computing it.
- \`wait\`: true (default) waits for the child to finish: the step is \`waiting\` with
  \`awaiting_workflow_execution_id\` and resumes with the child's output, or fails with the
  child's error (\`child_failed\`, \`child_cancelled\`; retryable under the node's retry
  policy, which calls again). Cancelling the caller cancels the child it waits for. False
  starts the child and goes on at once.

**Output**

The child execution's output when \`wait\` is true; \`{execution_id}\` of the child when it
is false.`,
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
  effects: true,
});
