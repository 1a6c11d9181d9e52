import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';

/**
 * Folders (the spec leaves their fields open): a name, an optional parent (one level deep) and
 * a sparse position ordering siblings. Lists default to position order.
 */
export const folderResource: ResourceDefinition = {
  type: 'workflow-folder',
  table: 'workflow_folders',
  defaultSort: 'position',
  attributes: {
    name: { kind: 'string', default: true },
    parent_id: { kind: 'uuid', nullable: true, default: true },
    position: { kind: 'number', default: true },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
    workspace_id: { kind: 'uuid' },
  },
};
