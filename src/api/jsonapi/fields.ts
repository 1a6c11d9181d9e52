import { isPlainObject } from '../../lib/json.js';
import { invalidParameter } from './filter-operand.js';
import { defaultFields, type ResourceDefinition } from './resource-definition.js';

/** Sparse fieldsets by resource type: `fields[workflow]=name,graph`. */
export type FieldsMap = Map<string, Set<string>>;

/**
 * Parses `fields` as `qs` delivers it. `fields[workflow]=` (empty) asks for no attributes at
 * all, which JSON:API allows: the resource objects then carry only `type` and `id`.
 */
export function parseFields(raw: unknown, definitions: readonly ResourceDefinition[]): FieldsMap {
  const fields: FieldsMap = new Map();
  if (raw === undefined) return fields;
  if (!isPlainObject(raw)) throw invalidParameter('fields', 'fields is keyed by resource type, e.g. fields[workflow]=name,status');
  for (const [type, value] of Object.entries(raw)) {
    const parameter = `fields[${type}]`;
    const definition = definitions.find((candidate) => candidate.type === type);
    if (!definition) {
      throw invalidParameter(parameter, `Unknown resource type '${type}'; fields apply to ${definitions.map((d) => d.type).join(', ')}`);
    }
    if (typeof value !== 'string') throw invalidParameter(parameter, `${parameter} takes one comma-separated list of attributes`);
    const attributes = new Set<string>();
    for (const attribute of value === '' ? [] : value.split(',')) {
      if (!Object.hasOwn(definition.attributes, attribute)) {
        throw invalidParameter(parameter, `'${attribute}' is not an attribute of ${type}`);
      }
      attributes.add(attribute);
    }
    fields.set(type, attributes);
  }
  return fields;
}

/**
 * The attributes to render for a resource, in the definition's order: the requested ones, or
 * the default ones when the request does not mention the type.
 */
export function selectedAttributes(definition: ResourceDefinition, fields: FieldsMap): string[] {
  const requested = fields.get(definition.type);
  if (!requested) return defaultFields(definition);
  return Object.keys(definition.attributes).filter((attribute) => requested.has(attribute));
}
