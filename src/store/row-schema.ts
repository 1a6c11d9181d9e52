import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { isPlainObject } from '../lib/json.js';
import { JSON_SCALAR_TYPES, type JsonScalarType } from '../db/dialect/dialect.js';
import { escapePointerToken } from '../lib/json-pointer.js';

/**
 * Row schemas: JSON Schema 2020-12 object schemas, checked when a store is created or its schema
 * changes, then compiled once per (store, schema version) and cached.
 *
 * One ajv instance serves every store. Compiling registers a schema in the instance, so each
 * compile is followed by `removeSchema`, and `$id` is refused: a nested `$id` would stay
 * registered (ajv only forgets the top level) and two stores using the same one would collide.
 * A schema is self-contained: `$defs` with `#…` references.
 */
const ajv = new Ajv2020({
  allErrors: true,
  // Unknown keywords and formats are refused (a typo such as "requird" would otherwise be
  // silently ignored); the other strict checks flag legitimate schemas and stay off.
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  logger: false,
});
addFormats.default(ajv);
// ajv resolves `$anchor` references but does not list the keyword, so strict mode would refuse it.
ajv.addKeyword({ keyword: '$anchor', schemaType: 'string' });

export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
/** Bounds the work a schema costs to check and compile; real row schemas are far smaller. */
export const MAX_SCHEMA_BYTES = 256 * 1024;
export const MAX_SCHEMA_DEPTH = 64;

/** One problem with a schema or a row: `pointer` is a JSON Pointer inside it ('' = the whole). */
export interface SchemaIssue {
  pointer: string;
  detail: string;
}

// Their values are data, not schemas: a `{"$ref": …}` inside an enum is just a value.
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

/** Checks a store schema; an empty list means it compiles and can validate rows. */
export function checkStoreSchema(schema: unknown): SchemaIssue[] {
  if (!isPlainObject(schema)) return [{ pointer: '', detail: 'schema must be a JSON Schema object (2020-12) describing one row' }];
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES)
    return [{ pointer: '', detail: `schema must be at most ${MAX_SCHEMA_BYTES / 1024} KiB of JSON` }];
  const issues: SchemaIssue[] = [];
  if (schema.type !== 'object')
    issues.push({ pointer: '/type', detail: 'schema must describe an object: its top-level "type" must be "object"' });
  if (schema.$schema !== undefined && schema.$schema !== DRAFT_2020_12 && schema.$schema !== `${DRAFT_2020_12}#`) {
    issues.push({ pointer: '/$schema', detail: `only JSON Schema 2020-12 is supported ("$schema": "${DRAFT_2020_12}")` });
  }
  walk(schema, '', 0, issues);
  if (issues.length > 0) return issues;
  if (!ajv.validateSchema(schema)) return describeMetaErrors(ajv.errors ?? []);
  try {
    compile(schema);
  } catch (error) {
    return [compileIssue(schema, error)];
  }
  return [];
}

function walk(value: unknown, pointer: string, depth: number, issues: SchemaIssue[]): void {
  if (depth > MAX_SCHEMA_DEPTH) {
    if (!issues.some((issue) => issue.detail.startsWith('schema is nested')))
      issues.push({ pointer, detail: `schema is nested more than ${MAX_SCHEMA_DEPTH} levels deep` });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, `${pointer}/${index}`, depth + 1, issues));
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const here = `${pointer}/${escapePointerToken(key)}`;
    if (typeof child === 'string' && (key === '$ref' || key === '$dynamicRef') && !child.startsWith('#')) {
      issues.push({ pointer: here, detail: `${key} must point inside the schema ("#/$defs/…"); remote references are not supported` });
    } else if (typeof child === 'string' && key === '$id') {
      issues.push({
        pointer: here,
        detail: '$id is not supported: a store schema is self-contained; name parts with $defs and refer to them with "#/$defs/…"',
      });
    } else if (!DATA_KEYWORDS.has(key)) {
      walk(child, here, depth + 1, issues);
    }
  }
}

/** The meta-schema's errors, one per place: the most telling of those reported there. */
function describeMetaErrors(errors: readonly ErrorObject[]): SchemaIssue[] {
  const rank = (error: ErrorObject) =>
    error.keyword === 'enum' ? 0 : error.keyword === 'anyOf' || error.keyword === 'oneOf' ? 3 : error.keyword === 'type' ? 1 : 2;
  const best = new Map<string, ErrorObject>();
  for (const error of errors) {
    const current = best.get(error.instancePath);
    if (!current || rank(error) < rank(current)) best.set(error.instancePath, error);
  }
  return [...best.values()].map((error) => {
    const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
    const detail = allowed ? `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` : (error.message ?? 'is invalid');
    return { pointer: error.instancePath, detail: `schema${error.instancePath ? ` at ${error.instancePath}` : ''} ${detail}` };
  });
}

function compileIssue(schema: Record<string, unknown>, error: unknown): SchemaIssue {
  const message = error instanceof Error ? error.message : String(error);
  const unknownKeyword = /^strict mode: unknown keyword: "(.*)"$/.exec(message)?.[1];
  if (unknownKeyword !== undefined) {
    return { pointer: findKey(schema, unknownKeyword, '') ?? '', detail: `"${unknownKeyword}" is not a JSON Schema 2020-12 keyword` };
  }
  return { pointer: '', detail: `schema does not compile: ${message}` };
}

/** The pointer of the first place `key` is used as a keyword, depth first. */
function findKey(value: unknown, key: string, pointer: string, depth = 0): string | null {
  if (depth > MAX_SCHEMA_DEPTH || typeof value !== 'object' || value === null) return null;
  const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value);
  for (const [name, child] of entries) {
    if (name === key && !Array.isArray(value)) return `${pointer}/${escapePointerToken(name)}`;
    if (DATA_KEYWORDS.has(name)) continue;
    const found = findKey(child, key, `${pointer}/${escapePointerToken(name)}`, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}

/** Compiled validators by store and schema version; bounded, least recently used first out. */
const validators = new Map<string, ValidateFunction>();
const MAX_VALIDATORS = 1000;

/**
 * The validator of a store's schema version, compiled on first use. The text is what the
 * store row holds, already checked when it was stored.
 */
export function rowValidator(storeId: string, schemaVersion: number, schemaText: string): ValidateFunction {
  const cacheKey = `${storeId}:${schemaVersion}`;
  const validate = validators.get(cacheKey) ?? compile(JSON.parse(schemaText) as Record<string, unknown>);
  remember(cacheKey, validate);
  return validate;
}

/** Seeds the cache with a validator compiled for a schema version that has just committed. */
export function rememberRowValidator(storeId: string, schemaVersion: number, validate: ValidateFunction): void {
  remember(`${storeId}:${schemaVersion}`, validate);
}

function remember(cacheKey: string, validate: ValidateFunction): void {
  validators.delete(cacheKey);
  validators.set(cacheKey, validate);
  if (validators.size > MAX_VALIDATORS) validators.delete(validators.keys().next().value!);
}

/** Compiles a schema that `checkStoreSchema` accepted (for a scan before the version exists). */
export function compileRowSchema(schema: Record<string, unknown>): ValidateFunction {
  return compile(schema);
}

/** At most this many violations of one row are reported. */
export const MAX_ROW_VIOLATIONS = 100;

/** What is wrong with `row` under `validate`, pointers relative to the row. */
export function rowViolations(validate: ValidateFunction, row: unknown): SchemaIssue[] {
  if (validate(row)) return [];
  return (validate.errors ?? []).slice(0, MAX_ROW_VIOLATIONS).map(describeRowError);
}

function describeRowError(error: ErrorObject): SchemaIssue {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const pointer = `${error.instancePath}/${escapePointerToken(String(params.missingProperty))}`;
      return { pointer, detail: `${fieldName(pointer)} is required` };
    }
    case 'additionalProperties': {
      const pointer = `${error.instancePath}/${escapePointerToken(String(params.additionalProperty))}`;
      return { pointer, detail: `${fieldName(pointer)} is not allowed by the store's schema` };
    }
    case 'enum':
      return {
        pointer: error.instancePath,
        detail: `${fieldName(error.instancePath)} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    default:
      return { pointer: error.instancePath, detail: `${fieldName(error.instancePath)} ${error.message ?? 'is invalid'}` };
  }
}

/** `/items/0/price` -> `row.items[0].price`. */
function fieldName(pointer: string): string {
  let name = 'row';
  for (const raw of pointer.split('/').slice(1)) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    name += /^\d+$/.test(token) ? `[${token}]` : `.${token}`;
  }
  return name;
}

/** A top-level field the schema declares with one scalar type: what row filters can compare. */
export interface DeclaredField {
  type: JsonScalarType;
  nullable: boolean;
}

/**
 * The top-level `properties` whose `type` is one scalar type, optionally with "null". Other
 * declarations (no type, several types, objects, arrays, `$ref`) are not filterable.
 */
export function declaredFields(schema: unknown): Map<string, DeclaredField | string> {
  const fields = new Map<string, DeclaredField | string>();
  const properties = isPlainObject(schema) && isPlainObject(schema.properties) ? schema.properties : {};
  for (const [name, property] of Object.entries(properties)) {
    const declared = isPlainObject(property) ? property.type : undefined;
    const types = typeof declared === 'string' ? [declared] : Array.isArray(declared) ? declared : [];
    const scalars = types.filter((type): type is JsonScalarType => (JSON_SCALAR_TYPES as readonly unknown[]).includes(type));
    const nullable = types.includes('null');
    if (scalars.length === 1 && types.length === scalars.length + (nullable ? 1 : 0)) {
      fields.set(name, { type: scalars[0]!, nullable });
    } else {
      // Kept as the reason, so a filter on it can say why it is refused.
      fields.set(
        name,
        types.length === 0
          ? 'it declares no "type"'
          : `its type is ${JSON.stringify(declared)}, not one of string, integer, number, boolean (optionally with null)`,
      );
    }
  }
  return fields;
}
