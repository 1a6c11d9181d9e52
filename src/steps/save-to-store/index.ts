import { defineStep } from '../define-step.js';
import { orExpression } from '../expression-schema.js';

export const saveToStoreStep = defineStep({
  slug: 'save_to_store',
  name: 'Save to Store',
  description: 'Inserts or replaces one row of a store, keyed by a string.',
  docs: `Writes one row into a store of the workspace, replacing the row with the same key. The
row must satisfy the store's schema and the store's row cap applies, as for API writes.

**Config**

- \`store_id\` (required): id of the store.
- \`key\` (required): the row's key; usually an expression such as
  \`{{ trigger.body.order.id }}\`.
- \`row\` (required): an object, or one \`{{ … }}\` expression yielding it.`,
  categories: ['act'],
  icon: 'database',
  iconColor: '#D97706',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['store_id', 'key', 'row'],
    properties: {
      store_id: { type: 'string', format: 'uuid' },
      key: { type: 'string', minLength: 1 },
      row: orExpression({ type: 'object' }),
    },
  },
  defaultConfig: {},
  outputSchema: null,
  sortOrder: 70,
  canvasVisible: true,
  effects: true,
});
