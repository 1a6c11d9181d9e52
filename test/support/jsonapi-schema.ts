import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * The JSON:API 1.0 response schema (json-api/json-api, CC0; see test/fixtures/README.md).
 * Every JSON:API response a test receives is checked against it by the test client.
 */
const schema = JSON.parse(readFileSync(new URL('../fixtures/jsonapi-1.0-response.schema.json', import.meta.url), 'utf8'));
const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);
const validate = ajv.compile(schema);

export function jsonApiViolations(document: unknown): string[] {
  if (validate(document)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}
