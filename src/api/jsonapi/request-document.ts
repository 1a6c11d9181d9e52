import { AppError } from '../../errors/app-error.js';
import { isPlainObject } from '../../lib/json.js';
import { escapePointerToken as token } from '../../lib/json-pointer.js';
import type { AttributeInput } from '../../services/attribute-input.js';

/**
 * Reads a create or update body in either form DESIGN.md allows: the JSON:API envelope
 * `{data:{type, id?, attributes, relationships}}` or the spec's flat `{data:{name, ...}}`.
 * A to-one relationship `{data:{type, id}}` (or null) becomes the attribute `<name>_id`. Member
 * names are the caller's, so they are escaped in pointers (RFC 6901: `~0`, `~1`).
 */
export function readResourceDocument(
  body: unknown,
  type: string,
  options: { id?: string; relationships?: Record<string, string> } = {},
): AttributeInput {
  if (!isPlainObject(body)) throw new AppError('invalid_document', 'the body must be a JSON object with a "data" member', { pointer: '' });
  const data = body.data;
  if (!isPlainObject(data)) throw new AppError('invalid_document', 'the "data" member must be an object', { pointer: '/data' });

  const enveloped = data.type !== undefined || data.attributes !== undefined || data.relationships !== undefined;
  if (!enveloped) {
    if (options.id !== undefined && data.id !== undefined && data.id !== options.id)
      throw new AppError('id_mismatch', `data.id "${String(data.id)}" does not match the id in the path`, { pointer: '/data/id' });
    const { id: _id, ...values } = data;
    return { values, pointer: (name) => `/data/${token(name)}` };
  }

  if (data.type !== type) throw new AppError('type_mismatch', `data.type must be "${type}"`, { pointer: '/data/type' });
  if (options.id !== undefined && data.id !== undefined && data.id !== options.id)
    throw new AppError('id_mismatch', `data.id "${String(data.id)}" does not match the id in the path`, { pointer: '/data/id' });
  for (const key of Object.keys(data)) {
    if (!['type', 'id', 'attributes', 'relationships', 'meta'].includes(key))
      throw new AppError('invalid_document', `unknown member "${key}" in a resource object`, { pointer: `/data/${token(key)}` });
  }
  if (data.attributes !== undefined && !isPlainObject(data.attributes))
    throw new AppError('invalid_document', 'data.attributes must be an object', { pointer: '/data/attributes' });
  const values: Record<string, unknown> = { ...((data.attributes as Record<string, unknown>) ?? {}) };
  const pointers = new Map<string, string>();

  if (data.relationships !== undefined) {
    if (!isPlainObject(data.relationships))
      throw new AppError('invalid_document', 'data.relationships must be an object', { pointer: '/data/relationships' });
    for (const [name, relationship] of Object.entries(data.relationships)) {
      const relatedType = options.relationships?.[name];
      const pointer = `/data/relationships/${token(name)}`;
      if (!relatedType) throw new AppError('validation_failed', `unknown relationship "${name}"`, { pointer });
      if (!isPlainObject(relationship) || !('data' in relationship))
        throw new AppError('invalid_document', `relationship ${name} must be {"data": {"type", "id"}} or {"data": null}`, { pointer });
      const linkage = relationship.data;
      if (linkage === null) {
        values[`${name}_id`] = null;
      } else if (isPlainObject(linkage) && linkage.type === relatedType && typeof linkage.id === 'string') {
        values[`${name}_id`] = linkage.id;
      } else {
        throw new AppError('validation_failed', `relationship ${name} must name a "${relatedType}" resource`, {
          pointer: `${pointer}/data`,
        });
      }
      pointers.set(`${name}_id`, `${pointer}/data`);
    }
  }
  return { values, pointer: (name) => pointers.get(name) ?? `/data/attributes/${token(name)}` };
}

/** Action routes take `{}`, `{data:{}}`, or nothing. Returns `data` (an object) or {}. */
export function readActionData(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (!isPlainObject(body)) throw new AppError('invalid_document', 'the body must be a JSON object', { pointer: '' });
  if (body.data === undefined) return {};
  if (!isPlainObject(body.data)) throw new AppError('invalid_document', 'the "data" member must be an object', { pointer: '/data' });
  return body.data;
}
