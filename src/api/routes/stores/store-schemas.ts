import { PAGE_PARAMETER_SCHEMA } from '../../jsonapi/query-document.js';
import { DOCUMENT_FORM, LIST_QUERY_SCHEMA, resourceBodySchema } from '../../jsonapi/resource-schemas.js';
import { STORE_WRITE_MODES } from '../../../store/store-write.js';
import { DRAFT_2020_12, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH } from '../../../store/row-schema.js';
import { MAX_ROW_BYTES } from '../../../store/row-text.js';
import { STORE_SLUG } from '../../../services/stores/store-slug.js';
import { dataBodyForm, DESCRIPTION, NAME } from '../body-schemas.js';

/** Route schemas of the store routes beyond the generic JSON:API ones (OpenAPI and validation). */
const uuid = { type: 'string', description: 'UUID' } as const;
const key = {
  type: 'string',
  description: 'the row key: 1 to 512 characters of any Unicode, percent-encoded (a/b as a%2Fb, % as %25)',
} as const;
const timestamp = { type: 'string', format: 'date-time' } as const;
const nullableUuid = { type: ['string', 'null'], format: 'uuid' } as const;

export const STORE_ID_PARAMS = { type: 'object', required: ['store_id'], properties: { store_id: uuid } } as const;
export const ROW_PARAMS = { type: 'object', required: ['store_id', 'key'], properties: { store_id: uuid, key } } as const;

/** The attributes StoreService reads on create and update (name required on create). */
const STORE_ATTRIBUTES = {
  name: NAME,
  slug: {
    type: 'string',
    pattern: STORE_SLUG.source,
    description:
      '1 to 64 lower-case letters, digits and dashes, no dash at either end; unique in the workspace; absent on create: derived from the name',
  },
  description: DESCRIPTION,
  schema: {
    type: 'object',
    required: ['type'],
    properties: { type: { const: 'object' }, $schema: { enum: [DRAFT_2020_12, `${DRAFT_2020_12}#`] } },
    additionalProperties: true,
    description: `a JSON Schema (2020-12) describing one row: an object, at most ${MAX_SCHEMA_BYTES / 1024} KiB of JSON and ${MAX_SCHEMA_DEPTH} levels deep, self-contained ($ref only inside it, no $id); a new one is checked against every row first`,
  },
  row_cap: {
    type: 'integer',
    minimum: 1,
    description:
      "the most rows the store holds, up to this server's maximum (SWITCHYARD_STORE_MAX_ROW_CAP); never below the current row count",
  },
};

export const CREATE_STORE_BODY = resourceBodySchema('store', STORE_ATTRIBUTES, { required: ['name'] });
export const UPDATE_STORE_BODY = resourceBodySchema('store', STORE_ATTRIBUTES);

const PUT_ROW_MEMBERS = {
  row: {
    type: 'object',
    additionalProperties: true,
    description: `the row, which must satisfy the store schema; at most ${MAX_ROW_BYTES / 1024} KiB of JSON`,
  },
  mode: {
    type: 'string',
    enum: STORE_WRITE_MODES.filter((mode) => mode !== 'delete'),
    description:
      'upsert (default: insert or replace), insert (409 row_exists when the key exists) or update (404 row_not_found when it does not)',
  },
};

/**
 * Member types are described, not enforced here: the write path answers a wrong row with 422
 * and a pointer, as it does for schema violations. The document shows them (DOCUMENT_FORM).
 */
export const PUT_ROW_BODY = {
  type: 'object',
  required: ['data'],
  [DOCUMENT_FORM]: dataBodyForm(PUT_ROW_MEMBERS, ['row']),
  properties: {
    data: {
      type: 'object',
      additionalProperties: true,
      properties: {
        row: { description: 'object: the row, which must satisfy the store schema' },
        mode: {
          description:
            'upsert (default: insert or replace), insert (409 row_exists when the key exists) or update (404 row_not_found when it does not)',
        },
      },
    },
  },
} as const;

export const ROW_WRITE_RESPONSE = {
  description: 'the row as stored; 201 when it was inserted, 200 when it replaced one',
  type: 'object',
  required: ['key', 'row', 'created_at', 'updated_at', 'workflow_id', 'execution_id', 'created'],
  properties: {
    key: { type: 'string' },
    row: { type: 'object', additionalProperties: true },
    created_at: timestamp,
    updated_at: timestamp,
    workflow_id: nullableUuid,
    execution_id: nullableUuid,
    created: { type: 'boolean' },
  },
} as const;

/** A feed's `page`: these members of the list page, forward only (a feed has no offset and no way back). */
function feedPage(members: readonly string[]) {
  const properties = PAGE_PARAMETER_SCHEMA.properties as Record<string, unknown>;
  return {
    type: 'object',
    description: `${members.map((m) => `page[${m}]`).join(', ')}: forward through links.next only`,
    properties: Object.fromEntries(members.map((m) => [m, properties[m]])),
    additionalProperties: false,
  };
}

export const FEED_QUERY_SCHEMA = {
  ...LIST_QUERY_SCHEMA,
  properties: {
    ...LIST_QUERY_SCHEMA.properties,
    sort: {
      type: 'string',
      description: 'only updated_at: the feed is ordered by (updated_at, key), the cursor order',
      [DOCUMENT_FORM]: { type: 'string', enum: ['updated_at'], description: 'only updated_at: the feed is ordered by (updated_at, key)' },
    },
    page: {
      type: 'object',
      additionalProperties: true,
      description: 'page[limit] (1-500, default 50), page[after] (the cursor from links.next), page[count]=true',
      [DOCUMENT_FORM]: feedPage(['limit', 'after', 'count']),
    },
    filter: {
      type: 'object',
      additionalProperties: true,
      description:
        'deepObject filter on key, updated_at, created_at, workflow_id, execution_id and row.<field> for fields the schema declares with a scalar type',
    },
    updated_since: { type: 'string', description: 'RFC 3339 timestamp: rows updated at or after it' },
    workflow_id: { type: 'string', description: 'UUID: rows that workflow last wrote' },
  },
} as const;

export const DELETIONS_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    since: { type: 'string', description: 'RFC 3339 timestamp: deletions at or after it' },
    page: {
      type: 'object',
      additionalProperties: true,
      description: 'page[limit] (1-500, default 50), page[after] (the cursor from links.next)',
      [DOCUMENT_FORM]: feedPage(['limit', 'after']),
    },
  },
} as const;

export const DELETIONS_RESPONSE = {
  description: 'tombstones oldest first; links.next is always present (poll it for later deletions)',
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: { type: 'object', properties: { key: { type: 'string' }, deleted_at: timestamp, workflow_id: nullableUuid } },
    },
    links: { type: 'object', properties: { next: { type: 'string' } } },
  },
} as const;
