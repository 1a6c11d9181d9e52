import { AppError } from '../../errors/app-error.js';
import { canonicalTimestamp } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import type { AttributeSpec, ResourceDefinition } from './resource-definition.js';

/** A coerced filter operand: what is bound as the SQL parameter (booleans before dialect encoding). */
export type FilterOperand = string | number | boolean;

/**
 * `id` is part of every resource (JSON:API keeps it beside the attributes), so it is filterable
 * and sortable even when a definition does not list it.
 */
const ID_SPEC: AttributeSpec = { kind: 'uuid' };

export function findAttribute(definition: ResourceDefinition, name: string): AttributeSpec | undefined {
  if (Object.hasOwn(definition.attributes, name)) return definition.attributes[name];
  return name === 'id' ? ID_SPEC : undefined;
}

export function invalidParameter(parameter: string, detail: string): AppError {
  return new AppError('invalid_query_parameter', detail, { parameter });
}

const INTEGER = /^-?\d+$/;
// Plain decimal notation only: Number() would also take '', ' 1', '0x1f' and 'Infinity'.
const DECIMAL = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/** Echoes a caller's operand in a message without letting a long one flood the error document. */
function quote(raw: string): string {
  return raw.length > 64 ? `'${raw.slice(0, 64)}…'` : `'${raw}'`;
}

/** Checks and converts one operand (always a string in a query) to the attribute's kind. */
export function coerceOperand(raw: string, spec: AttributeSpec, parameter: string): FilterOperand {
  // PostgreSQL text cannot hold NUL and rejects the whole statement; SQLite would just compare.
  if (raw.includes('\u0000')) throw invalidParameter(parameter, 'Filter values cannot contain the NUL character');
  switch (spec.kind) {
    case 'string':
      return raw;
    case 'uuid':
      // Ids are minted and stored lower-case; an upper-case spelling names the same id.
      if (!isUuid(raw)) throw invalidParameter(parameter, `${quote(raw)} is not a UUID`);
      return raw.toLowerCase();
    case 'integer': {
      const value = Number(raw);
      if (!INTEGER.test(raw)) throw invalidParameter(parameter, `${quote(raw)} is not an integer`);
      if (!Number.isSafeInteger(value)) throw invalidParameter(parameter, `${quote(raw)} is outside the safe integer range`);
      return value;
    }
    case 'number': {
      const value = Number(raw);
      if (!DECIMAL.test(raw) || !Number.isFinite(value)) throw invalidParameter(parameter, `${quote(raw)} is not a finite number`);
      return value;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw invalidParameter(parameter, `${quote(raw)} is not a boolean (true or false)`);
      return raw === 'true';
    case 'timestamp': {
      const value = canonicalTimestamp(raw);
      if (value === null) throw invalidParameter(parameter, `${quote(raw)} is not an RFC 3339 timestamp`);
      return value;
    }
    case 'enum': {
      const values = spec.values ?? [];
      if (!values.includes(raw)) throw invalidParameter(parameter, `${quote(raw)} is not one of ${values.join(', ')}`);
      return raw;
    }
    case 'object':
      // Stored JSON is `JSON.stringify` output, so the operand is re-serialised the same way:
      // whitespace does not matter, key order does.
      try {
        return JSON.stringify(JSON.parse(raw));
      } catch {
        throw invalidParameter(parameter, `${quote(raw)} is not JSON text`);
      }
  }
}
