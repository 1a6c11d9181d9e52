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
- \`timeout_ms\`: 1 to 60000, default 5000. Longer runs fail with \`timeout\`.
- \`memory_mb\`: 1 to 256, default 64. Using more fails with \`memory_limit\`.
- \`reuse_context\`: default true. A run may reuse the sandbox context an earlier run of the
  same step left (same workspace, workflow, node and code), which skips building a fresh
  JavaScript environment: several times faster for short code. Variables declared in the code
  never carry over (the code is a function body), and globals a run adds are removed after it;
  changes a run makes to built-in objects (a polyfill on \`Array.prototype\`, say) may be seen
  by later runs of the same step, never by any other step. A run that fails, times out, is
  cancelled or leaves work queued never passes its context on. Set false for a fresh context
  on every run.

Throw \`new NonRetriableError(message)\` to fail without retries, or
\`new RetryAfterError(message, ms)\` to be retried no sooner than \`ms\` milliseconds later;
anything else thrown fails the step with \`code_error\`, which the node's \`retry\` retries.

**Output**

The JSON value the code returns. Lines written with \`console\` are kept on the step record,
not passed on. A result that is not JSON (a function, a BigInt, a cycle) or is over 10 MiB of
JSON fails the step.`,
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
      timeout_ms: { type: 'integer', minimum: 1, maximum: 60_000 },
      memory_mb: { type: 'integer', minimum: 1, maximum: 256 },
      reuse_context: { type: 'boolean' },
    },
  },
  defaultConfig: { code: 'return input;' },
  outputSchema: {},
  sortOrder: 40,
  canvasVisible: true,
});
