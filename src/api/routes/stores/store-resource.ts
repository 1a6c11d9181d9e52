import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';

/** A store: a workspace data table. Lists are oldest first (the contract). */
export const storeResource: ResourceDefinition = {
  type: 'store',
  table: 'stores',
  defaultSort: 'created_at',
  attributes: {
    name: { kind: 'string', default: true },
    slug: { kind: 'string', default: true },
    description: { kind: 'string', nullable: true, default: true },
    schema: { kind: 'object', default: true },
    row_count: { kind: 'integer', default: true },
    row_cap: { kind: 'integer', default: true },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
    schema_version: { kind: 'integer' },
    last_write_at: { kind: 'timestamp', nullable: true },
    workspace_id: { kind: 'uuid' },
  },
};

/**
 * A row of a store; its JSON:API id is its key. Rows are listed in change order only (the
 * cursor), so the definition's sort is never parsed from a request.
 */
export const storeRowResource: ResourceDefinition = {
  type: 'store-row',
  table: 'store_rows',
  defaultSort: 'updated_at',
  idKind: 'string',
  filterPattern: {
    pattern: '^row\\.[^.]+$',
    description:
      "filter[row.<field>][operator]=value: a top-level field the store's schema declares with one scalar type, compared as that type",
  },
  attributes: {
    key: { kind: 'string', default: true },
    row: { kind: 'object', default: true, filterable: false },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
    workflow_id: { kind: 'uuid', nullable: true, default: true },
    execution_id: { kind: 'uuid', nullable: true, default: true },
  },
};
