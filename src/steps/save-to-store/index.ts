import { defineStep } from '../define-step.js';
import { orExpression } from '../expression-schema.js';

export const STORE_STEP_MODES = ['upsert', 'insert', 'update', 'delete'] as const;

export const saveToStoreStep = defineStep({
  slug: 'save_to_store',
  name: 'Save to Store',
  description: 'Inserts, replaces, updates or deletes one row of a store, keyed by a string.',
  docs: `Writes one row of a store of the workspace. The row must satisfy the store's schema and
the store's row cap applies, as for API writes. The write commits in the same transaction that
records the step completed: after a crash a row exists exactly when its step completed, and a
retried step never writes twice. A failed write (schema, cap, key conflict) fails the step
without retries; schema violations carry a pointer each (\`/row/<field>\`).

**Config**

- \`store_id\` (required): id of the store.
- \`key\` (required): the row's key; usually an expression such as
  \`{{ trigger.body.order.id }}\`.
- \`row\` (required unless \`mode\` is \`delete\`): an object, or one \`{{ … }}\` expression yielding it.
- \`mode\`: \`upsert\` (default) inserts or replaces; \`insert\` fails with \`row_exists\` when the
  key exists; \`update\` fails with \`row_not_found\` when it does not; \`delete\` removes the row
  (\`row_not_found\` when missing).

**Output**

\`{store_id, key, row, mode, created, deleted, created_at, updated_at}\`: the row as stored (for
\`delete\`, the row removed).`,
  categories: ['act'],
  icon: 'database',
  iconColor: '#D97706',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['store_id', 'key'],
    properties: {
      store_id: { type: 'string', format: 'uuid' },
      key: { type: 'string', minLength: 1 },
      row: orExpression({ type: 'object' }),
      mode: { enum: [...STORE_STEP_MODES], default: 'upsert' },
    },
    // A delete names only the key; every other mode writes a row.
    if: { required: ['mode'], properties: { mode: { const: 'delete' } } },
    else: { required: ['row'] },
  },
  defaultConfig: {},
  outputSchema: null,
  sortOrder: 70,
  canvasVisible: true,
  effects: true,
});
