import { MESSAGE_ROLES } from '../../../db/schema.js';
import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';

const COMPACTION_SCHEMA = {
  type: 'object',
  properties: {
    mode: { type: 'string', enum: ['none', 'truncate', 'summarize'] },
    threshold_tokens: { type: 'integer' },
    connection_id: { type: 'string', format: 'uuid' },
    model: { type: 'string' },
  },
};
const RECALL_SCHEMA = { type: 'object', properties: { mode: { type: 'string', enum: ['none', 'semantic'] }, top_k: { type: 'integer' } } };

/** A memory: the settings its sessions follow. */
export const memoryResource: ResourceDefinition = {
  type: 'memory',
  table: 'memories',
  defaultSort: 'created_at',
  attributes: {
    name: { kind: 'string', default: true },
    window: { kind: 'integer', default: true },
    compaction: { kind: 'object', default: true, schema: COMPACTION_SCHEMA },
    recall: { kind: 'object', default: true, schema: RECALL_SCHEMA },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
    workspace_id: { kind: 'uuid' },
  },
};

/** One conversation of a memory, named by the caller's session key. */
export const memorySessionResource: ResourceDefinition = {
  type: 'memory-session',
  table: 'memory_sessions',
  defaultSort: 'created_at',
  attributes: {
    key: { kind: 'string', column: 'session_key', default: true },
    message_count: { kind: 'integer', default: true },
    window_tokens: { kind: 'integer', default: true },
    compaction_count: { kind: 'integer', default: true },
    last_compacted_at: { kind: 'timestamp', nullable: true, default: true },
    last_compaction: { kind: 'object', nullable: true, default: true, schema: { type: ['object', 'null'], additionalProperties: true } },
    compaction_due: { kind: 'boolean', default: true },
    compaction_error: {
      kind: 'object',
      nullable: true,
      default: true,
      schema: { type: ['object', 'null'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
    },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
  },
};

/** A stored message; `in_window` says whether it is still in the prompt window. */
export const memoryMessageResource: ResourceDefinition = {
  type: 'memory-message',
  table: 'memory_messages',
  defaultSort: 'position',
  attributes: {
    role: { kind: 'enum', values: MESSAGE_ROLES, default: true },
    content: { kind: 'string', default: true },
    created_at: { kind: 'timestamp', default: true },
    position: { kind: 'integer', default: true },
    tokens: { kind: 'integer', default: true },
    in_window: { kind: 'boolean', default: true },
  },
};
