import { isPlainObject } from '../../lib/json.js';
import { defineStep } from '../define-step.js';

/** Out ports of a placeholder standing for a node with `outputs` outputs: `out`, then `output_1`, `output_2`, … */
export function placeholderPorts(config: Record<string, unknown>): string[] {
  const outputs =
    typeof config.outputs === 'number' && Number.isInteger(config.outputs) && config.outputs > 0
      ? Math.min(config.outputs, MAX_PLACEHOLDER_OUTPUTS)
      : 1;
  return ['out', ...Array.from({ length: outputs - 1 }, (_, i) => placeholderPort(i + 1))];
}

/** The port of a placeholder's output `index` (0 is `out`). */
export function placeholderPort(index: number): string {
  return index === 0 ? 'out' : `output_${index}`;
}

export const MAX_PLACEHOLDER_OUTPUTS = 64;

/**
 * Stands for a node imported from another tool that no Switchyard step can do (an n8n Airtable
 * node, Python code, a chat trigger). It keeps what the source said, so nothing is lost, and it
 * cannot run: activating or draft-running a workflow that holds one is refused with its pointer
 * until it is replaced or removed. Has no runtime.
 */
export const placeholderStep = defineStep({
  outPorts: (config) => placeholderPorts(config),
  slug: 'placeholder',
  name: 'Placeholder',
  description: 'An imported node that has no Switchyard step yet; it keeps the original and cannot run.',
  docs: `Created by imports (\`POST /api/v1/workflows\` with a \`document\`) for every source node that
could not be mapped to a step. It keeps the original node so nothing is lost, and it keeps the
node's place and wiring on the canvas. It cannot run: activating a workflow that holds a
placeholder, or running its canvas as a draft, is refused with a pointer to each one. Replace it
with a step (or remove it) and save the graph.

**Config**

- \`original\` (required): the source node as it was: \`type\`, \`version\`, \`name\`,
  \`parameters\`, and for n8n also its \`credentials\` (names only), \`notes\` and attached
  sub-nodes.
- \`reason\`: why it could not be mapped.
- \`suggested\`: when the node maps onto a step this release does not have (a schedule
  trigger, say), the step type and config it would become.
- \`outputs\`: how many outputs the original node had (default 1); they are the ports \`out\`,
  \`output_1\`, \`output_2\`, …

**Output**

None: a placeholder never runs.`,
  categories: ['transform'],
  icon: 'puzzle',
  iconColor: '#9CA3AF',
  trigger: false,
  ports: { in: ['in'], out: ['out'] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['original'],
    properties: {
      original: {
        type: 'object',
        required: ['type'],
        properties: { type: { type: 'string', minLength: 1 }, name: { type: 'string' }, parameters: {} },
      },
      reason: { type: 'string' },
      suggested: { type: 'object', required: ['type', 'config'], properties: { type: { type: 'string' }, config: { type: 'object' } } },
      outputs: { type: 'integer', minimum: 1, maximum: MAX_PLACEHOLDER_OUTPUTS },
    },
  },
  defaultConfig: {},
  outputSchema: null,
  sortOrder: 900,
  // Nobody adds one from the palette; imports do.
  canvasVisible: false,
});

/** Whether a stored node is a placeholder (the import report and activation read this). */
export function isPlaceholderConfig(config: unknown): config is { original: Record<string, unknown>; reason?: string } {
  return isPlainObject(config) && isPlainObject(config.original);
}
