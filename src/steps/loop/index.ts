import { defineStep } from '../define-step.js';
import { orExpression } from '../expression-schema.js';

export const LOOP_BODY_PORT = 'body';
export const LOOP_DONE_PORT = 'done';

/** Run by the engine itself (each item runs the body's nodes; see engine/loop-runner.ts), so it has no runtime here. */
export const loopStep = defineStep({
  slug: 'loop',
  name: 'Loop',
  description: 'Runs the steps after its body port once per item of a list, then passes on the results.',
  docs: `Repeats a part of the workflow for each item of a list, one item at a time, in order.

The body is every node reachable from the \`body\` port. It is entered only through that port
(no edge from outside the body may lead into it), it must not lead back to the loop, and loops
do not nest: a body that needs its own loop calls another workflow. Each body node that
follows the loop directly receives the current item as its input. Expressions in the body see
the current element as \`item\` and its position, counted from 0, as \`index\` (also
\`$item\` and \`$index\`); \`nodes\` holds the outputs of the nodes before the loop and of
the body nodes of the current iteration. An iteration's result is the output of the body's
last node to complete that leads nowhere further.

Every body step row carries \`loop_node_id\` and \`iter_index\`. A body step that waits (a
\`wait\` step, a retry delay, an awaited call) makes the loop wait; a failing body step fails
the loop (\`loop_iteration_failed\`, naming the iteration and the node), unless the body node
routes its error on with \`on_error: "continue"\`.

**Config**

- \`items\` (required): one \`{{ … }}\` expression yielding an array, such as
  \`"{{ nodes.fetch.body.orders }}"\`, or a fixed array; at most 10,000 items.

**Ports**

- \`body\`: leads to the steps run once per item.
- \`done\`: taken once every item has run.

**Output**

On \`done\`, the list of the iterations' results, in the order of \`items\`.`,
  categories: ['decide'],
  icon: 'repeat',
  iconColor: '#65A30D',
  trigger: false,
  ports: { in: ['in'], out: [LOOP_BODY_PORT, LOOP_DONE_PORT] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['items'],
    properties: {
      items: orExpression({ type: 'array' }),
    },
  },
  defaultConfig: {},
  outputSchema: { type: 'array' },
  sortOrder: 110,
  canvasVisible: true,
});
