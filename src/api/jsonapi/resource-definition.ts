import type { RawBuilder } from 'kysely';

/**
 * How a JSON:API resource maps onto its table: the attribute kinds decide which filter
 * operators and operand types apply, which attributes are returned by default and which only
 * through `fields[type]`, and what can be sorted.
 */
export const ATTRIBUTE_KINDS = ['uuid', 'string', 'integer', 'number', 'boolean', 'timestamp', 'object', 'enum'] as const;
export type AttributeKind = (typeof ATTRIBUTE_KINDS)[number];

export interface AttributeSpec {
  kind: AttributeKind;
  /** Column name when it differs from the attribute name. */
  column?: string;
  /** Allowed values of an enum attribute. */
  values?: readonly string[];
  /** The column can hold NULL. */
  nullable?: boolean;
  /** Returned without `fields[type]` (the spec's "default" marking). */
  default?: boolean;
  /** Defaults: true for every kind but `object`. */
  sortable?: boolean;
  /** Defaults: true. */
  filterable?: boolean;
  /** JSON Schema of the value in responses and OpenAPI, when the kind alone says too little (arrays). */
  schema?: Record<string, unknown>;
  /**
   * Filters compare this SQL expression instead of the column: a value inside a JSON column
   * (a store row's declared field). The table alias is the list's, when it has one.
   */
  expression?: (tableAlias: string | undefined) => RawBuilder<unknown>;
}

/** A related resource a filter can reach: `filter[workflow][name][eq]=x`. */
export interface RelationFilterSpec {
  resource: () => ResourceDefinition;
  /** Column of this table holding the related id. */
  localColumn: string;
}

export interface ResourceDefinition {
  type: string;
  table: string;
  attributes: Record<string, AttributeSpec>;
  relationFilters?: Record<string, RelationFilterSpec>;
  /** JSON:API sort string used when the request has none, e.g. `-created_at`. */
  defaultSort: string;
  /** The kind `filter[id]` compares as, when ids are not UUIDs (a store row's id is its key); for the OpenAPI document. */
  idKind?: AttributeKind;
  /** Filterable names beyond the attributes, as a pattern (a store row's `row.<field>`), for the OpenAPI document. */
  filterPattern?: { pattern: string; description: string };
  /** Explains why a name is not filterable, when the generic message would not say enough. */
  filterHint?: (name: string) => string | undefined;
}

export function defaultFields(definition: ResourceDefinition): string[] {
  return Object.entries(definition.attributes)
    .filter(([, spec]) => spec.default)
    .map(([name]) => name);
}

export function columnOf(definition: ResourceDefinition, attribute: string): string {
  return definition.attributes[attribute]?.column ?? attribute;
}
