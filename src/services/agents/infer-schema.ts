import { isPlainObject } from '../../lib/json.js';

/**
 * A JSON Schema describing a sample value: the shape a workflow tool's arguments take when
 * the tool declares no `input_schema` and the callee's trigger captured a sample. Every member
 * of the sample is required (the callee was built against it); nested objects and the first
 * element of arrays are described the same way.
 */
export function inferSchema(sample: unknown): Record<string, unknown> {
  if (sample === null) return { type: 'null' };
  if (Array.isArray(sample)) return sample.length > 0 ? { type: 'array', items: inferSchema(sample[0]) } : { type: 'array' };
  if (isPlainObject(sample)) {
    const properties: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(sample)) properties[key] = inferSchema(value);
    return { type: 'object', properties, required: Object.keys(sample) };
  }
  if (typeof sample === 'number') return { type: Number.isInteger(sample) ? 'integer' : 'number' };
  return { type: typeof sample };
}
