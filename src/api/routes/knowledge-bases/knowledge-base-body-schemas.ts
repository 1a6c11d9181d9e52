import { DOCUMENT_FORM, RESOURCE_BODY_SCHEMA, resourceBodySchema } from '../../jsonapi/resource-schemas.js';
import { JSONAPI_MEDIA_TYPE } from '../../plugins/error-document.js';
import { METADATA_KEY } from '../../../knowledge/search-indexes.js';
import { SEARCH_MODES } from '../../../knowledge/search-knowledge.js';
import { MAX_TOP_K } from '../../../services/knowledge/knowledge-base-service.js';
import { MAX_DOCUMENT_BYTES } from '../../../services/knowledge/knowledge-document-service.js';
import { dataBodyForm, DESCRIPTION, NAME } from '../body-schemas.js';

/**
 * Request bodies of the knowledge-base routes, with exactly what KnowledgeBaseService and
 * KnowledgeDocumentService read.
 */
const EMBEDDER = {
  description: 'the embedder of the chunks; changing it re-embeds every chunk in the background',
  anyOf: [
    { type: 'null', description: 'the built-in embedder' },
    {
      title: 'Built-in',
      type: 'object',
      required: ['kind'],
      properties: { kind: { type: 'string', const: 'builtin' } },
      additionalProperties: false,
    },
    {
      title: 'Connection',
      type: 'object',
      required: ['connection_id', 'model'],
      properties: {
        connection_id: { type: 'string', format: 'uuid', description: 'an openai or openai_compatible connection of this workspace' },
        model: { type: 'string', minLength: 1, maxLength: 200, description: 'the embedding model; not blank' },
      },
      additionalProperties: false,
    },
  ],
};

const BASE_ATTRIBUTES = {
  name: NAME,
  description: DESCRIPTION,
  embedder: EMBEDDER,
  chunk_size: {
    type: 'integer',
    minimum: 32,
    maximum: 8192,
    description: 'tokens per chunk, default 512; for documents ingested afterwards',
  },
  chunk_overlap: {
    type: 'integer',
    minimum: 0,
    maximum: 4096,
    description: 'tokens shared by neighbouring chunks, default 64; at most half of chunk_size',
  },
};

/** POST /knowledge-bases: the built-in embedder unless one is given. */
export const CREATE_BASE_BODY = resourceBodySchema('knowledge-base', BASE_ATTRIBUTES, { required: ['name'] });
export const UPDATE_BASE_BODY = resourceBodySchema('knowledge-base', BASE_ATTRIBUTES);

const DOCUMENT_ATTRIBUTES = {
  title: {
    type: 'string',
    minLength: 1,
    maxLength: 500,
    description: 'trimmed; not blank; identifies the document when it has no external_key',
  },
  content: { type: 'string', description: `the text; at most ${MAX_DOCUMENT_BYTES / 1024 / 1024} MiB as UTF-8` },
  content_type: {
    type: ['string', 'null'],
    // The service lower-cases the value, trims it and drops media-type parameters.
    pattern: '^\\s*[Tt][Ee][Xx][Tt]/(?:[Mm][Aa][Rr][Kk][Dd][Oo][Ww][Nn]|[Pp][Ll][Aa][Ii][Nn])\\s*(?:;[\\s\\S]*)?$',
    description: 'text/markdown (default; chunked by headings) or text/plain, in any case, parameters ignored; null: the default',
  },
  external_key: {
    type: ['string', 'null'],
    maxLength: 500,
    description: 'trimmed; the key a re-send matches (instead of the title); null or empty: none',
  },
  metadata: {
    type: ['object', 'null'],
    additionalProperties: true,
    description: 'searchable with the filter of POST /search; at most 16 KiB as JSON; null: {}',
  },
};

/** POST /knowledge-bases/:id/documents: JSON:API, or the raw text with its title in the query. */
export const INGEST_BODY = {
  content: {
    [JSONAPI_MEDIA_TYPE]: {
      schema: {
        ...RESOURCE_BODY_SCHEMA,
        description: 'attributes title, content, content_type (text/markdown default, text/plain), external_key, metadata',
        [DOCUMENT_FORM]: resourceBodySchema('knowledge-document', DOCUMENT_ATTRIBUTES, { required: ['title', 'content'] })[DOCUMENT_FORM],
      },
    },
    'text/markdown': { schema: { type: 'string', description: 'the document itself; title and external_key in the query' } },
    'text/plain': { schema: { type: 'string', description: 'the document itself; title and external_key in the query' } },
  },
};

const SEARCH_MEMBERS = {
  query: { type: 'string', minLength: 1, maxLength: 4000, description: 'required; not blank' },
  top_k: { type: 'integer', minimum: 1, maximum: MAX_TOP_K, description: `1 to ${MAX_TOP_K}, default 5` },
  mode: { type: 'string', enum: [...SEARCH_MODES], description: 'hybrid (default), vector or keyword' },
  filter: {
    type: 'object',
    propertyNames: { pattern: METADATA_KEY.source },
    additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
    maxProperties: 16,
    description: 'equality on metadata keys: {"lang": "en"}; at most 16 keys',
  },
};

/**
 * The framework checks the member types; the service checks the values (422 with a pointer).
 * The document shows both (DOCUMENT_FORM).
 */
export const SEARCH_BODY = {
  type: 'object',
  required: ['data'],
  [DOCUMENT_FORM]: dataBodyForm(SEARCH_MEMBERS, ['query']),
  properties: {
    data: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'required' },
        top_k: { type: 'integer', description: '1 to 50, default 5' },
        mode: { type: 'string', description: 'hybrid (default), vector or keyword' },
        filter: { type: 'object', description: 'equality on metadata keys: {"lang": "en"}' },
      },
    },
  },
} as const;
