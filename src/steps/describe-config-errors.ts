import type { ErrorObject } from 'ajv';
import { WHOLE_EXPRESSION_PATTERN } from './expression-schema.js';

/** One problem in a step config: `pointer` is a JSON Pointer inside the config ('' = the config). */
export interface ConfigIssue {
  pointer: string;
  detail: string;
}

/**
 * Turns ajv errors (compiled with `allErrors` and `verbose`) into one sentence per problem.
 * A failed `anyOf` also reports every branch's errors; see `suppressUnionNoise` for which of
 * them are kept.
 */
export function describeConfigErrors(errors: readonly ErrorObject[]): ConfigIssue[] {
  const suppressed = suppressUnionNoise(errors);
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (suppressed.has(error)) continue;
    const issue = describeError(error);
    if (issue === null) continue;
    const key = `${issue.pointer}\n${issue.detail}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

/**
 * When the value's type fits exactly one non-expression branch (`{"a": 1}` for "object of
 * strings or expression"), that branch's errors say precisely what is wrong. Otherwise (a
 * plain string where an integer or an expression belongs) the union's own summary, "must be
 * an integer from 100 to 599 or a single {{ … }} expression", is clearer than the branches'
 * "must be integer" and "must match pattern …".
 */
function suppressUnionNoise(errors: readonly ErrorObject[]): Set<ErrorObject> {
  const suppressed = new Set<ErrorObject>();
  for (const union of errors) {
    if (union.keyword !== 'anyOf' && union.keyword !== 'oneOf') continue;
    const prefix = `${union.schemaPath}/`;
    const branchOf = (e: ErrorObject) => (e.schemaPath.startsWith(prefix) ? e.schemaPath.slice(prefix.length).split('/')[0] : undefined);
    const branches = Array.isArray(union.schema) ? (union.schema as unknown[]) : [];
    // A branch whose `type` failed on the value itself cannot be the one the author meant.
    const typeFailed = (index: number) =>
      errors.some((e) => e.keyword === 'type' && e.instancePath === union.instancePath && e.schemaPath === `${prefix}${index}/type`);
    const candidates = branches.map((_, index) => index).filter((index) => !typeFailed(index));
    const only = candidates.length === 1 ? candidates[0] : undefined;
    const keep = only !== undefined && !isExpressionSchema(branches[only]) ? String(only) : undefined;
    if (keep !== undefined) suppressed.add(union);
    for (const error of errors) {
      const branch = branchOf(error);
      if (branch !== undefined && branch !== keep) suppressed.add(error);
    }
  }
  return suppressed;
}

function isExpressionSchema(schema: unknown): boolean {
  return (schema as { pattern?: unknown } | undefined)?.pattern === WHOLE_EXPRESSION_PATTERN;
}

function describeError(error: ErrorObject): ConfigIssue | null {
  const params = error.params as Record<string, unknown>;
  const here = error.instancePath;
  switch (error.keyword) {
    case 'if':
      // The failing `then` keywords are reported on their own.
      return null;
    case 'required':
      return issue(child(here, params.missingProperty), (f) => `${f} is required.`);
    case 'additionalProperties':
      return issue(child(here, params.additionalProperty), (f) => `${f} is not a known field.`);
    case 'discriminator': {
      // A missing tag is already reported by `required`.
      if (params.tagValue === undefined) return null;
      const tags = discriminatorValues(error.parentSchema, String(params.tag));
      return issue(child(here, params.tag), (f) => `${f} must be one of ${listValues(tags)}.`);
    }
    case 'type':
      return issue(here, (f) => `${f} must be ${describeTypes(params.type)}.`);
    case 'enum':
      return issue(here, (f) => `${f} must be one of ${listValues(params.allowedValues)}.`);
    case 'const':
      return issue(here, (f) => `${f} must be ${JSON.stringify(params.allowedValue)}.`);
    case 'minimum':
      return issue(here, (f) => `${f} must be at least ${String(params.limit)}.`);
    case 'maximum':
      return issue(here, (f) => `${f} must be at most ${String(params.limit)}.`);
    case 'minLength':
      return issue(here, (f) =>
        params.limit === 1 ? `${f} must not be empty.` : `${f} must be at least ${String(params.limit)} characters long.`,
      );
    case 'format':
      return issue(here, (f) => `${f} must be ${params.format === 'uuid' ? 'a UUID' : `a valid ${String(params.format)}`}.`);
    case 'pattern':
      return issue(here, (f) =>
        params.pattern === WHOLE_EXPRESSION_PATTERN
          ? `${f} must be a single {{ … }} expression.`
          : `${f} must match the pattern ${String(params.pattern)}.`,
      );
    case 'anyOf':
    case 'oneOf': {
      const branches = Array.isArray(error.schema) ? (error.schema as unknown[]) : [];
      return issue(here, (f) => `${f} must be ${branches.map(describeSchema).join(' or ')}.`);
    }
    default:
      return issue(here, (f) => `${f} ${error.message ?? 'is invalid'}.`);
  }
}

function issue(pointer: string, sentence: (field: string) => string): ConfigIssue {
  return { pointer, detail: sentence(fieldName(pointer)) };
}

function child(pointer: string, key: unknown): string {
  return `${pointer}/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

/** `/verification/secret` -> `config.verification.secret`, `/ids/0` -> `config.ids[0]`. */
function fieldName(pointer: string): string {
  let name = 'config';
  for (const raw of pointer.split('/').slice(1)) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    name += /^\d+$/.test(token) ? `[${token}]` : `.${token}`;
  }
  return name;
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function describeTypes(type: unknown): string {
  const types = Array.isArray(type) ? type : String(type).split(',');
  return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(' or ');
}

function listValues(values: unknown): string {
  return Array.isArray(values) ? values.map((v) => JSON.stringify(v)).join(', ') : JSON.stringify(values);
}

function describeSchema(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return 'a matching value';
  const s = schema as Record<string, unknown>;
  if (isExpressionSchema(s)) return 'a single {{ … }} expression';
  if (Array.isArray(s.enum)) return `one of ${listValues(s.enum)}`;
  if (s.type === undefined) return 'a matching value';
  const base = describeTypes(s.type);
  if (typeof s.minimum === 'number' && typeof s.maximum === 'number') {
    return `${base} from ${s.minimum} to ${s.maximum}`;
  }
  return base;
}

function discriminatorValues(parentSchema: unknown, tag: string): unknown[] {
  const branches = (parentSchema as { oneOf?: unknown } | undefined)?.oneOf;
  if (!Array.isArray(branches)) return [];
  return branches.map((b) => (b as { properties?: Record<string, { const?: unknown }> }).properties?.[tag]?.const);
}
