import { COMMON_OPERATORS, STRING_OPERATORS } from './filter-tree.js';
import { MAX_IN_VALUES } from './filter.js';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './page.js';
import type { AttributeSpec, ResourceDefinition } from './resource-definition.js';

type Schema = Record<string, unknown>;

/**
 * How the OpenAPI document describes the `filter`, `page` and `fields` query parameters of a
 * resource, from the same definition their parsers read (filter.ts, page.ts, fields.ts). Only
 * the document uses these schemas: the routes check the parameters with the parsers, whose
 * errors name the exact parameter at fault (`filter[name][eq]`), which a schema validator's
 * would not. Nesting is described to one level of combinators and relations: OpenAPI 3.1 can
 * say more only with recursive references, which no client generator serializes.
 */
const OPERAND_TYPES: Record<AttributeSpec['kind'], Schema> = {
  uuid: { type: 'string', format: 'uuid' },
  string: { type: 'string' },
  integer: { type: 'integer' },
  number: { type: 'number' },
  boolean: { type: 'boolean' },
  timestamp: { type: 'string', format: 'date-time' },
  object: { type: 'string' },
  enum: { type: 'string' },
};

function operandSchema(spec: AttributeSpec): Schema {
  if (spec.kind === 'enum' && spec.values) return { type: 'string', enum: [...spec.values] };
  return OPERAND_TYPES[spec.kind];
}

/** A row field's operand: the store's schema decides its type, so any scalar. */
const ANY_SCALAR: Schema = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] };

function attributeFilter(name: string, spec: AttributeSpec, operand: Schema = operandSchema(spec)): Schema {
  const operators: Schema = {};
  for (const operator of COMMON_OPERATORS) {
    if (operator === 'in') operators.in = { type: 'array', items: operand, maxItems: MAX_IN_VALUES };
    else if (operator === 'is_nil') operators.is_nil = { type: 'boolean' };
    else operators[operator] = operand;
  }
  if (spec.kind === 'string') for (const operator of STRING_OPERATORS) operators[operator] = { type: 'string' };
  return {
    description: `filter[${name}][operator]=value; filter[${name}]=value is filter[${name}][eq]=value`,
    anyOf: [operand, { type: 'object', properties: operators, additionalProperties: false, minProperties: 1 }],
  };
}

function comparisons(definition: ResourceDefinition): Schema {
  const properties: Schema = { id: attributeFilter('id', { kind: definition.idKind ?? 'uuid' }) };
  for (const [name, spec] of Object.entries(definition.attributes)) {
    if (spec.filterable !== false) properties[name] = attributeFilter(name, spec);
  }
  return properties;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The members of a nested filter (a relation's, or inside and / or / not), as a pattern of the
 * names it takes: converters and generators that serialize deepObject parameters (Postman's
 * openapi-to-postmanv2 among them) give up on a second level of named members with alternatives
 * (they sent no filter at all), and skip a pattern, while a validator still checks the names.
 */
function nestedFilter(patterns: readonly string[], description: string): Schema {
  const operand = attributeFilter('…', { kind: 'string' }, ANY_SCALAR);
  return {
    type: 'object',
    description,
    patternProperties: { [`^(${patterns.join('|')})$`]: operand },
    additionalProperties: false,
  };
}

function filterNames(definition: ResourceDefinition): string[] {
  const names = [
    'id',
    ...Object.entries(definition.attributes)
      .filter(([, spec]) => spec.filterable !== false)
      .map(([name]) => name),
  ];
  return names.map(escapeRegExp);
}

/** `filter` of a list of `definition`: its attributes, relations and the combinators. */
export function filterParameterSchema(definition: ResourceDefinition): Schema {
  const properties = comparisons(definition);
  const relations = Object.entries(definition.relationFilters ?? {});
  for (const [name, relation] of relations) {
    const related = relation.resource();
    properties[name] = nestedFilter(
      filterNames(related),
      `a filter on the related ${related.type}: filter[${name}][attribute][operator]=value`,
    );
  }
  const names = [
    ...filterNames(definition),
    ...relations.map(([name]) => escapeRegExp(name)),
    ...(definition.filterPattern ? ['row\\.[^.]+'] : []),
  ];
  const combined = (description: string) => ({
    type: 'object',
    description,
    patternProperties: { '^[0-9]+$': nestedFilter(names, 'one filter: its members are all required') },
    additionalProperties: false,
  });
  properties.and = combined('all of: filter[and][0][attribute][operator]=…&filter[and][1][…]=…');
  properties.or = combined('any of: filter[or][0][attribute][operator]=…&filter[or][1][…]=…');
  // `not` is a pattern, not a property: openapi-to-postmanv2 6.4 reads a property named `not` as
  // the keyword and then sends no filter at all (scripts/postman-check.mjs found it).
  const patternProperties: Schema = { '^not$': nestedFilter(names, 'none of: filter[not][attribute][operator]=…') };
  const pattern = definition.filterPattern;
  if (pattern) {
    patternProperties[pattern.pattern] = {
      ...attributeFilter('row.<field>', { kind: 'string' }, ANY_SCALAR),
      description: pattern.description,
    };
  }
  return {
    type: 'object',
    description: 'filter[attribute][operator]=value or filter[attribute]=value (eq); several members are all required (docs/api.md)',
    properties,
    patternProperties,
    additionalProperties: false,
  };
}

export const PAGE_PARAMETER_SCHEMA: Schema = {
  type: 'object',
  description: 'page[limit], then page[offset] or a cursor from links.next / links.prev (page[after], page[before]); page[count]=true',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
    offset: { type: 'integer', minimum: 0 },
    after: { type: 'string', minLength: 1, description: 'an opaque cursor from links.next' },
    before: { type: 'string', minLength: 1, description: 'an opaque cursor from links.prev' },
    count: { type: 'boolean', description: 'adds meta.count, the number of matching rows' },
  },
  // One way of paging at a time: an offset, or one cursor.
  not: { anyOf: [{ required: ['after', 'before'] }, { required: ['offset', 'after'] }, { required: ['offset', 'before'] }] },
  additionalProperties: false,
};

/** `fields` for answers holding resources of these definitions: fields[type]=a,b (comma-separated attribute names). */
export function fieldsParameterSchema(definitions: readonly ResourceDefinition[]): Schema {
  return {
    type: 'object',
    description: 'sparse fieldsets: fields[type]=a,b, a comma-separated list of attribute names (empty: none)',
    properties: Object.fromEntries(
      definitions.map((definition) => [
        definition.type,
        {
          type: 'string',
          pattern: `^((${Object.keys(definition.attributes).join('|')})(,(${Object.keys(definition.attributes).join('|')}))*)?$`,
        },
      ]),
    ),
    additionalProperties: false,
  };
}

/** `sort` of a list of `definition`: comma-separated sortable attributes, `-` for descending. */
export function sortParameterSchema(definition: ResourceDefinition): Schema {
  const names = [
    'id',
    ...Object.entries(definition.attributes)
      .filter(([, spec]) => spec.sortable ?? spec.kind !== 'object')
      .map(([name]) => name),
  ];
  const one = `-?(${names.map(escapeRegExp).join('|')})`;
  return {
    type: 'string',
    description: `comma-separated attributes, - for descending (default ${definition.defaultSort}); id is the last tie-breaker`,
    pattern: `^${one}(,${one})*$`,
    example: definition.defaultSort,
  };
}
