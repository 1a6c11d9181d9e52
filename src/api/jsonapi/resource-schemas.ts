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
        {
          type: 'object',
          required: ['type', 'id'],
          properties: { type: { type: 'string', const: type }, id: { type: 'string' } },
          additionalProperties: false,
        },
      ],
    },
  },
  additionalProperties: false,
});

/** Every definition a response schema was built from, by type: the OpenAPI document describes its list's query parameters from it. */
const definitionsByType = new Map<string, ResourceDefinition>();

export function definitionOfType(type: string): ResourceDefinition | undefined {
  return definitionsByType.get(type);
}

export function resourceObjectSchema(definition: ResourceDefinition, relationships: Record<string, string> = {}): Record<string, unknown> {
  definitionsByType.set(definition.type, definition);
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
      attributes: { type: 'object', properties: attributes, additionalProperties: false },
      ...(Object.keys(relationships).length > 0
        ? { relationships: { type: 'object', properties: relationshipSchemas, additionalProperties: false } }
        : {}),
      links: { type: 'object', required: ['self'], properties: { self: { type: 'string' } }, additionalProperties: false },
    },
    additionalProperties: false,
  };
}

const JSONAPI_MEMBER = { type: 'object', properties: { version: { type: 'string' } }, additionalProperties: false };
const LINKS = {
  type: 'object',
  properties: { self: { type: 'string' }, next: { type: 'string' }, prev: { type: 'string' } },
  additionalProperties: false,
};

/** A type `include` can add to an answer, with the relationships its resource objects carry. */
export type IncludedType = ResourceDefinition | { definition: ResourceDefinition; relationships: Record<string, string> };

const includedSchema = (included: IncludedType) =>
  'definition' in included ? resourceObjectSchema(included.definition, included.relationships) : resourceObjectSchema(included);

export function singleDocumentSchema(
  definition: ResourceDefinition,
  relationships: Record<string, string> = {},
  included: IncludedType[] = [],
) {
  return {
    type: 'object',
    properties: {
      data: resourceObjectSchema(definition, relationships),
      ...(included.length > 0 ? { included: { type: 'array', items: { anyOf: included.map(includedSchema) } } } : {}),
      links: LINKS,
      meta: { type: 'object', additionalProperties: true },
      jsonapi: JSONAPI_MEMBER,
    },
    required: ['data'],
    additionalProperties: false,
  };
}

export function listDocumentSchema(
  definition: ResourceDefinition,
  relationships: Record<string, string> = {},
  included: IncludedType[] = [],
) {
  return {
    type: 'object',
    properties: {
      data: { type: 'array', items: resourceObjectSchema(definition, relationships) },
      ...(included.length > 0 ? { included: { type: 'array', items: { anyOf: included.map(includedSchema) } } } : {}),
      links: LINKS,
      meta: { type: 'object', properties: { count: { type: 'integer' } }, additionalProperties: false },
      jsonapi: JSONAPI_MEMBER,
    },
    required: ['data'],
    additionalProperties: false,
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

/**
 * The OpenAPI document's form of a schema the route checks loosely at run time: the route's own
 * reading (readResourceDocument, the services) answers a finer error with a pointer than a
 * schema validator would, so the exact form is for the document only (openapi-exact.ts puts it
 * in place; Fastify's Ajv knows the keyword as an annotation).
 */
export const DOCUMENT_FORM = 'x-openapi';

type Schema = Record<string, unknown>;

const TOP_LEVEL = { meta: { type: 'object', additionalProperties: true }, jsonapi: JSONAPI_MEMBER };

export interface ResourceBodyOptions {
  /** Attributes a create must carry. */
  required?: readonly string[];
  /** To-one relationships the body may set, by name: the related type (flat form: `<name>_id`). */
  relationships?: Readonly<Record<string, string>>;
  description?: string;
}

/**
 * A create or update body in both forms readResourceDocument reads, `{data:{name, …}}` and the
 * JSON:API envelope `{data:{type, id?, attributes, relationships}}`, with exactly these
 * attributes. At run time the route takes any `data` object and its reading decides.
 */
export function resourceBodySchema(type: string, attributes: Record<string, Schema>, options: ResourceBodyOptions = {}): Schema {
  const required = options.required && options.required.length > 0 ? { required: [...options.required] } : {};
  const relationships = Object.entries(options.relationships ?? {});
  const flatRelations = Object.fromEntries(
    relationships.map(([name, related]) => [`${name}_id`, { type: ['string', 'null'], description: `the ${related}'s id, or null` }]),
  );
  const linkages = Object.fromEntries(relationships.map(([name, related]) => [name, linkage(related)]));
  const exact = {
    type: 'object',
    required: ['data'],
    properties: {
      data: {
        ...(options.description ? { description: options.description } : {}),
        anyOf: [
          {
            title: 'Flat',
            type: 'object',
            properties: { id: { type: 'string' }, ...attributes, ...flatRelations },
            ...required,
            additionalProperties: false,
          },
          {
            title: 'Resource object',
            type: 'object',
            required: ['type'],
            properties: {
              type: { type: 'string', const: type },
              id: { type: 'string' },
              attributes: { type: 'object', properties: attributes, ...required, additionalProperties: false },
              ...(relationships.length > 0 ? { relationships: { type: 'object', properties: linkages, additionalProperties: false } } : {}),
              meta: { type: 'object', additionalProperties: true },
            },
            additionalProperties: false,
          },
        ],
      },
      ...TOP_LEVEL,
    },
    additionalProperties: false,
  };
  return { ...RESOURCE_BODY_SCHEMA, [DOCUMENT_FORM]: exact };
}

/** Action routes take `{}`, `{data:{…}}` with these members, or no body (readActionData). */
export function actionBodySchema(members: Record<string, Schema> = {}, required: readonly string[] = []): Schema {
  return {
    [DOCUMENT_FORM]: {
      type: 'object',
      properties: {
        data:
          Object.keys(members).length === 0
            ? // The action reads nothing from `data`: whatever it holds is ignored (readActionData).
              { type: 'object', description: 'ignored: this action takes no members', additionalProperties: true }
            : {
                type: 'object',
                properties: members,
                ...(required.length > 0 ? { required: [...required] } : {}),
                additionalProperties: false,
              },
        ...TOP_LEVEL,
      },
      additionalProperties: false,
    },
  };
}

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
            additionalProperties: false,
          },
          meta: { type: 'object', additionalProperties: true },
        },
        required: ['status', 'code', 'title', 'detail'],
        additionalProperties: false,
      },
    },
    jsonapi: JSONAPI_MEMBER,
  },
  required: ['errors'],
  additionalProperties: false,
} as const;

/** The refusals a resource route answers as JSON:API error documents, for its `response` map. */
export const RESOURCE_ERRORS = {
  400: ERROR_RESPONSE_SCHEMA,
  401: ERROR_RESPONSE_SCHEMA,
  403: ERROR_RESPONSE_SCHEMA,
  404: ERROR_RESPONSE_SCHEMA,
  409: ERROR_RESPONSE_SCHEMA,
  422: ERROR_RESPONSE_SCHEMA,
} as const;
