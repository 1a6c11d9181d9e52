import { defineStep } from '../define-step.js';
import { orExpression } from '../expression-schema.js';

/** Most rows one read_store list returns: a step's output is stored with its execution. */
export const READ_STORE_MAX_LIMIT = 1000;

export const readStoreStep = defineStep({
  slug: 'read_store',
  name: 'Read Store',
  description: 'Looks up one row of a store by key, or lists rows matching a filter.',
  docs: `Reads rows of a store of the workspace. A store of another workspace reads as unknown
(\`store_not_found\`).

**Config**

- \`store_id\` (required): id of the store.
- \`key\`: the row's key (usually an expression). Given, the step gets that one row.
- \`filter\`: without \`key\`, the rows listed are those matching this filter, written as the
  row list API's \`filter\` parameter is: \`{"row.status": {"eq": "paid"}}\` is
  \`filter[row.status][eq]=paid\`; \`key\`, \`updated_at\`, \`created_at\`, \`workflow_id\` and the
  schema's declared top-level fields (\`row.<field>\`) with the same operators, and \`and\`,
  \`or\`, \`not\`. An object, or one \`{{ … }}\` expression yielding it.
- \`limit\`: most rows listed, 1 to ${READ_STORE_MAX_LIMIT} (default 100), in change-feed order
  (\`updated_at\`, then key).

**Output**

With \`key\`: the row, \`{key, row, created_at, updated_at, workflow_id, execution_id}\` (the
row resource's attributes), or \`null\` when the store has no such key. Without: \`{rows: [...],
count}\`, each row in the same form.`,
  categories: ['fetch'],
  icon: 'database-search',
  iconColor: '#D97706',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['store_id'],
    properties: {
      store_id: { type: 'string', format: 'uuid' },
      key: { type: 'string', minLength: 1 },
      filter: orExpression({ type: 'object' }),
      limit: orExpression({ type: 'integer', minimum: 1, maximum: READ_STORE_MAX_LIMIT }),
    },
  },
  defaultConfig: { limit: 100 },
  outputSchema: null,
  sortOrder: 75,
  canvasVisible: true,
});
