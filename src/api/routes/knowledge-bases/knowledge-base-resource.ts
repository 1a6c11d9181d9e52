import { DOCUMENT_STATUSES, EMBEDDER_STATUSES } from '../../../db/schema.js';
import type { ResourceDefinition } from '../../jsonapi/resource-definition.js';

const EMBEDDER_SCHEMA = {
  type: 'object',
  description: '{"kind": "builtin"} or {"connection_id", "model"}',
  properties: { kind: { type: 'string', enum: ['builtin'] }, connection_id: { type: 'string', format: 'uuid' }, model: { type: 'string' } },
};
const ERROR_SCHEMA = { type: ['object', 'null'], properties: { code: { type: 'string' }, message: { type: 'string' } } };

/** A knowledge base: settings, counters, and the state of its embedder. */
export const knowledgeBaseResource: ResourceDefinition = {
  type: 'knowledge-base',
  table: 'knowledge_bases',
  defaultSort: 'created_at',
  attributes: {
    name: { kind: 'string', default: true },
    description: { kind: 'string', nullable: true, default: true },
    embedder: { kind: 'object', default: true, schema: EMBEDDER_SCHEMA },
    chunk_size: { kind: 'integer', default: true },
    chunk_overlap: { kind: 'integer', default: true },
    document_count: { kind: 'integer', default: true },
    chunk_count: { kind: 'integer', default: true },
    embedder_status: { kind: 'enum', values: EMBEDDER_STATUSES, default: true },
    embedder_error: { kind: 'object', nullable: true, default: true, schema: ERROR_SCHEMA },
    index_embedder: { kind: 'object', nullable: true, schema: { ...EMBEDDER_SCHEMA, type: ['object', 'null'] } },
    index_dimensions: { kind: 'integer', nullable: true },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
    workspace_id: { kind: 'uuid' },
  },
};

/** A document of a knowledge base and its ingest status. */
export const knowledgeDocumentResource: ResourceDefinition = {
  type: 'knowledge-document',
  table: 'knowledge_documents',
  defaultSort: 'created_at',
  attributes: {
    title: { kind: 'string', default: true },
    external_key: { kind: 'string', nullable: true, default: true },
    content_type: { kind: 'string', default: true },
    status: { kind: 'enum', values: DOCUMENT_STATUSES, default: true },
    chunk_count: { kind: 'integer', default: true },
    bytes: { kind: 'integer', default: true },
    sha256: { kind: 'string', default: true },
    metadata: { kind: 'object', default: true },
    error: { kind: 'object', nullable: true, default: true, schema: ERROR_SCHEMA },
    version: { kind: 'integer' },
    knowledge_base_id: { kind: 'uuid' },
    created_at: { kind: 'timestamp', default: true },
    updated_at: { kind: 'timestamp', default: true },
  },
};
