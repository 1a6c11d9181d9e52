import { actionBodySchema, DOCUMENT_FORM } from '../jsonapi/resource-schemas.js';

/**
 * Request-body pieces several rooms share, written as the services read them: readString
 * (services/attribute-input.ts) trims a string before it checks emptiness and length, so the
 * limits below apply to the trimmed text.
 */
type Schema = Record<string, unknown>;

/** A name: required on create, optional on update, never null or blank. */
export const NAME = { type: 'string', minLength: 1, maxLength: 200, description: 'trimmed; not blank, at most 200 characters' } as const;

export const DESCRIPTION = {
  type: ['string', 'null'],
  maxLength: 10_000,
  description: 'trimmed; at most 10,000 characters; null for none',
} as const;

export const idOrNull = (description: string) => ({ type: ['string', 'null'], format: 'uuid', description }) as const;

/**
 * The document form of a body whose reader takes `{data: {…}}` with exactly these members (the
 * JSON:API envelope of actionBodySchema), `data` itself required when `dataRequired`.
 */
export function dataBodyForm(members: Record<string, Schema>, required: readonly string[] = [], dataRequired = true): Schema {
  const form = actionBodySchema(members, required)[DOCUMENT_FORM] as Schema;
  return dataRequired ? { ...form, required: ['data'] } : form;
}
