import { fromJsonText } from '../../lib/json.js';
import type { ResourceDefinition } from './resource-definition.js';

export interface ResourceObject {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  relationships?: Record<string, { data: { type: string; id: string } | null }>;
  links: { self: string };
}

/** Converts a stored value to its API form by attribute kind. */
function present(kind: string, value: unknown, nullable: boolean | undefined): unknown {
  // A boolean that cannot be null read from a nullable column (`reused`: a step's reused_from_step_id) is false for null.
  if (value === null || value === undefined) return kind === 'boolean' && !nullable ? false : null;
  switch (kind) {
    case 'boolean':
      return Boolean(value);
    case 'object':
      return typeof value === 'string' ? fromJsonText(value) : value;
    case 'integer':
    case 'number':
      return Number(value);
    default:
      return value;
  }
}

export function toResourceObject(
  definition: ResourceDefinition,
  row: Record<string, unknown>,
  attributes: Iterable<string>,
  selfUrl: string,
  relationships?: ResourceObject['relationships'],
): ResourceObject {
  const out: Record<string, unknown> = {};
  for (const name of attributes) {
    const spec = definition.attributes[name];
    if (!spec) continue;
    out[name] = present(spec.kind, row[spec.column ?? name], spec.nullable);
  }
  return {
    type: definition.type,
    id: String(row.id),
    attributes: out,
    ...(relationships ? { relationships } : {}),
    links: { self: selfUrl },
  };
}

export const JSONAPI_VERSION = { version: '1.0' } as const;
