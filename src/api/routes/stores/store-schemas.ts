import { LIST_QUERY_SCHEMA } from '../../jsonapi/resource-schemas.js';

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

/**
 * Member types are described, not enforced here: the write path answers a wrong row with 422
 * and a pointer, as it does for schema violations.
 */
export const PUT_ROW_BODY = {
  type: 'object',
  required: ['data'],
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

export const FEED_QUERY_SCHEMA = {
  ...LIST_QUERY_SCHEMA,
  properties: {
    ...LIST_QUERY_SCHEMA.properties,
    sort: { type: 'string', description: 'only updated_at: the feed is ordered by (updated_at, key), the cursor order' },
    page: {
      type: 'object',
      additionalProperties: true,
      description: 'page[limit] (1-500, default 50), page[after] (the cursor from links.next), page[count]=true',
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
