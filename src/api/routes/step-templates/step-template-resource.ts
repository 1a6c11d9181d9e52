import { STEP_CATEGORIES } from '../../../steps/define-step.js';
import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';

/** The step catalog as a resource; its rows come from the step definitions in code, not a table. */
export const stepTemplateResource: ResourceDefinition = {
  type: 'step-template',
  table: 'step_templates',
  defaultSort: 'sort_order',
  attributes: {
    name: { kind: 'string', default: true },
    slug: { kind: 'string', default: true },
    category: { kind: 'object', default: true, schema: { type: 'array', items: { type: 'string', enum: [...STEP_CATEGORIES] } } },
    icon: { kind: 'string' },
    icon_color: { kind: 'string' },
    canvas_schema: { kind: 'object', nullable: true, default: true },
    canvas_visible: { kind: 'boolean', nullable: true, default: true },
    default_config: { kind: 'object', nullable: true, default: true },
    description: { kind: 'string', nullable: true, default: true },
    docs: { kind: 'string', nullable: true, default: true },
    output_schema: { kind: 'string', nullable: true, default: true },
    ports: {
      kind: 'object',
      nullable: true,
      default: true,
      schema: {
        type: ['object', 'null'],
        properties: { in: { type: 'array', items: { type: 'string' } }, out: { type: 'array', items: { type: 'string' } } },
      },
    },
    sort_order: { kind: 'integer', nullable: true, default: true },
  },
};
