import type { AttributeSpec, ResourceDefinition } from './resource-definition.js';

/**
 * JSON Schemas of a resource's documents, derived from its definition: they describe the
 * responses in the OpenAPI document and drive Fastify's response serialisation, so the
 * definition is the single source of every attribute's type.
 */
function attributeSchema(spec: AttributeSpec): Record<string, unknown> {
  if (spec.schema) return spec.schema;
  const nullable = (type: string) => (spec.nullable ? [type, 'null'] : type);
  switch (spec.kind) {
    case 'uuid':
      return { type: nullable('string'), format: 'uuid' };
    case 'timestamp':
      return { type: nullable('string'), format: 'date-time' };
    case 'enum':
      return { type: nullable('string'), enum: spec.nullable ? [...(spec.values ?? []), null] : [...(spec.values ?? [])] };
    case 'object':
      return { type: nullable('object'), additionalProperties: true };
    case 'integer':
      return { type: nullable('integer') };
    case 'number':
      return { type: nullable('number') };
    case 'boolean':
      return { type: nullable('boolean') };
    default:
      return { type: nullable('string') };
  }
}

const linkage = (type: string) => ({
  type: 'object',
  properties: {
    data: {
      anyOf: [
        { type: 'null' },
        { type: 'object', required: ['type', 'id'], properties: { type: { type: 'string', const: type }, id: { type: 'string' } } },
      ],
    },
  },
});

export function resourceObjectSchema(definition: ResourceDefinition, relationships: Record<string, string> = {}): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(definition.attributes)) {
    attributes[name] = {
      ...attributeSchema(spec),
      description: spec.default ? 'returned by default' : `returned when requested with fields[${definition.type}]`,
    };
  }
  const relationshipSchemas = Object.fromEntries(Object.entries(relationships).map(([name, type]) => [name, linkage(type)]));
  return {
    type: 'object',
    required: ['type', 'id'],
    properties: {
      type: { type: 'string', const: definition.type },
      id: { type: 'string' },
      attributes: { type: 'object', properties: attributes },
      ...(Object.keys(relationships).length > 0 ? { relationships: { type: 'object', properties: relationshipSchemas } } : {}),
      links: { type: 'object', properties: { self: { type: 'string' } } },
    },
  };
}

const JSONAPI_MEMBER = { type: 'object', properties: { version: { type: 'string' } } };
const LINKS = { type: 'object', properties: { self: { type: 'string' }, next: { type: 'string' }, prev: { type: 'string' } } };

export function singleDocumentSchema(
  definition: ResourceDefinition,
  relationships: Record<string, string> = {},
  included: ResourceDefinition[] = [],
) {
  return {
    type: 'object',
    properties: {
      data: resourceObjectSchema(definition, relationships),
      ...(included.length > 0 ? { included: { type: 'array', items: { anyOf: included.map((d) => resourceObjectSchema(d)) } } } : {}),
      links: LINKS,
      meta: { type: 'object', additionalProperties: true },
      jsonapi: JSONAPI_MEMBER,
    },
  };
}

export function listDocumentSchema(
  definition: ResourceDefinition,
  relationships: Record<string, string> = {},
  included: ResourceDefinition[] = [],
) {
  return {
    type: 'object',
    properties: {
      data: { type: 'array', items: resourceObjectSchema(definition, relationships) },
      ...(included.length > 0 ? { included: { type: 'array', items: { anyOf: included.map((d) => resourceObjectSchema(d)) } } } : {}),
      links: LINKS,
      meta: { type: 'object', properties: { count: { type: 'integer' } } },
      jsonapi: JSONAPI_MEMBER,
    },
  };
}

/** The standard list query parameters; unknown parameters are rejected (400). */
export const LIST_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    filter: {
      type: 'object',
      additionalProperties: true,
      description: 'deepObject filter: filter[attribute][operator]=value, with and/or/not combinators',
    },
    sort: { type: 'string', description: 'comma-separated attributes, - for descending, e.g. -created_at,name' },
    page: {
      type: 'object',
      additionalProperties: true,
      description: 'page[limit] (1-500, default 50), page[offset], page[after], page[before] (opaque cursors), page[count]=true',
    },
    include: { type: 'string', description: 'comma-separated relationship names' },
    fields: { type: 'object', additionalProperties: { type: 'string' }, description: 'sparse fieldsets: fields[type]=a,b' },
  },
} as const;

export const SINGLE_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { include: LIST_QUERY_SCHEMA.properties.include, fields: LIST_QUERY_SCHEMA.properties.fields },
} as const;

export const ID_PARAMS_SCHEMA = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } as const;

/** Create/update bodies: a `data` object; the services validate its members with pointers. */
export const RESOURCE_BODY_SCHEMA = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'object', additionalProperties: true } },
} as const;

export const ERROR_RESPONSE_SCHEMA = {
  description: 'JSON:API error document',
  type: 'object',
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          status: { type: 'string' },
          code: { type: 'string' },
          title: { type: 'string' },
          detail: { type: 'string' },
          source: {
            type: 'object',
            properties: { pointer: { type: 'string' }, parameter: { type: 'string' }, header: { type: 'string' } },
          },
          meta: { type: 'object', additionalProperties: true },
        },
      },
    },
    jsonapi: JSONAPI_MEMBER,
  },
} as const;
