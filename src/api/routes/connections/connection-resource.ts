import { CONNECTION_PROVIDERS } from '../../../db/schema.js';
import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';

/** A model-provider connection; the API key is write-only, so only `has_api_key` shows. */
export const connectionResource: ResourceDefinition = {
  type: 'connection',
  table: 'connections',
  defaultSort: 'created_at',
  attributes: {
    provider: { kind: 'enum', values: CONNECTION_PROVIDERS, default: true },
    name: { kind: 'string', default: true },
    base_url: { kind: 'string', nullable: true, default: true },
    has_api_key: { kind: 'boolean', default: true },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
    workspace_id: { kind: 'uuid' },
  },
};
