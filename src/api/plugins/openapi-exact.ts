import { fieldsParameterSchema, filterParameterSchema, PAGE_PARAMETER_SCHEMA, sortParameterSchema } from '../jsonapi/query-document.js';
import { definitionOfType, DOCUMENT_FORM, ERROR_RESPONSE_SCHEMA } from '../jsonapi/resource-schemas.js';
import type { ResourceDefinition } from '../jsonapi/resource-definition.js';
import { JSONAPI_MEDIA_TYPE } from './error-document.js';
import { OPERATION_IDS } from './operation-ids.js';

type Schema = Record<string, unknown>;
type Operation = {
  operationId?: string;
  tags?: string[];
  parameters?: { in: string; name: string; schema?: Schema; style?: string; explode?: boolean }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
};

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

export const ERROR_SCHEMA_REF = { $ref: '#/components/schemas/ErrorDocument' };

/**
 * What any /api/v1 operation can answer before its handler runs, by the plugin that answers it:
 * the document declares each of them on every operation it applies to, so a client generated
 * from the document knows every status it can meet (docs/api.md, "Order of checks").
 */
function commonAnswers(path: string, method: string, operation: Operation): Record<string, string> {
  if (!path.startsWith('/api/v1/')) return {};
  const answers: Record<string, string> = {
    400: 'the request is malformed: a query parameter, the path or the body (`source` points at it)',
    401: 'no token, or a token that is unknown, expired or revoked',
    403: "the token's scope or the workspace's plan does not allow this",
    406: 'the Accept header excludes every media type this operation answers',
    429: 'over the API rate limit of this token; see Retry-After',
    503: 'the server is shutting down; retry on another connection',
  };
  if (path.includes('{')) answers[404] = 'no such resource in the token’s workspace';
  if (method !== 'get') {
    answers[413] = 'the request body is over the size limit';
    answers[415] = 'the request body is not of a media type this operation takes';
  }
  // media-type.ts refuses, for every JSON body, a string PostgreSQL cannot store.
  if (operation.requestBody?.content?.[JSONAPI_MEDIA_TYPE]) {
    answers[422] =
      'the body breaks a rule of this operation, or a string in it holds NUL or an unpaired surrogate (`source.pointer` names it)';
  }
  if (isResourceDocument(operation.requestBody?.content?.[JSONAPI_MEDIA_TYPE]?.schema)) {
    answers[409] = "the body's `data.type` or `data.id` does not match the resource (`type_mismatch`)";
  }
  return answers;
}

/** A create or update body (resourceBodySchema): its `data` may be a JSON:API resource object. */
function isResourceDocument(schema: Schema | undefined): boolean {
  const data = (schema?.properties as Record<string, Schema> | undefined)?.data;
  return ((data?.anyOf ?? []) as Schema[]).some((form) => form.title === 'Resource object');
}

function isErrorSchema(schema: Schema | undefined): boolean {
  const errors = (schema?.properties as Schema | undefined)?.errors;
  return errors !== undefined && JSON.stringify(errors) === JSON.stringify(ERROR_RESPONSE_SCHEMA.properties.errors);
}

/** The resource schema and the included ones of each 2xx JSON:API answer of the operation. */
function answeredResources(operation: Operation): { resource: Schema | undefined; included: Schema[] }[] {
  return Object.entries(operation.responses ?? {})
    .filter(([status, response]) => status.startsWith('2') && response.content?.[JSONAPI_MEDIA_TYPE]?.schema)
    .map(([, response]) => {
      const properties = response.content![JSONAPI_MEDIA_TYPE]!.schema!.properties as Record<string, Schema> | undefined;
      const data = properties?.data;
      return {
        resource: (data?.items ?? data) as Schema | undefined,
        included: ((properties?.included?.items as Schema | undefined)?.anyOf ?? []) as Schema[],
      };
    });
}

/** The resource definitions a JSON:API answer of the operation holds: its data's type and the included ones. */
function answeredDefinitions(operation: Operation): ResourceDefinition[] {
  const found: ResourceDefinition[] = [];
  for (const { resource, included } of answeredResources(operation)) {
    for (const candidate of [resource, ...included]) {
      const type = typeOf(candidate);
      const definition = typeof type === 'string' ? definitionOfType(type) : undefined;
      if (definition && !found.includes(definition)) found.push(definition);
    }
  }
  return found;
}

/** A resource schema's `type` (the generator writes a `const` as a one-value `enum`). */
const typeOf = (resource: Schema | undefined): unknown => {
  const type = (resource?.properties as Record<string, Schema> | undefined)?.type;
  return type?.const ?? (type?.enum as unknown[] | undefined)?.[0];
};

/** `include` takes the relationships of the answered resource whose type the answer can include. */
function includeSchema(operation: Operation): Schema | undefined {
  const answer = answeredResources(operation)[0];
  if (!answer) return undefined;
  const included = new Set(answer.included.map(typeOf));
  const relationships = ((answer.resource?.properties as Record<string, Schema> | undefined)?.relationships?.properties ?? {}) as Record<
    string,
    Schema
  >;
  const names = Object.entries(relationships)
    .filter(([, relationship]) => {
      const linkage = (relationship.properties as Record<string, Schema>).data?.anyOf as Schema[] | undefined;
      return (linkage ?? []).some((form) => included.has(typeOf(form)));
    })
    .map(([name]) => name);
  if (names.length === 0)
    return { type: 'string', enum: [''], description: 'nothing to include: this resource has no relationships to include' };
  const one = `(${names.join('|')})`;
  return { type: 'string', pattern: `^(${one}(,${one})*)?$`, description: `comma-separated: ${names.join(', ')}` };
}

/** filter, page and fields are deepObject parameters, each described from the answered resource's definition. */
function describeQuery(operation: Operation): void {
  const definitions = answeredDefinitions(operation);
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'query' || !parameter.schema) continue;
    const exact = parameter.schema[DOCUMENT_FORM] as Schema | undefined;
    if (exact) parameter.schema = structuredClone(exact);
    else if (parameter.name === 'filter' && definitions[0]) parameter.schema = filterParameterSchema(definitions[0]);
    else if (parameter.name === 'sort' && definitions[0] && parameter.schema.type === 'string')
      parameter.schema = sortParameterSchema(definitions[0]);
    else if (parameter.name === 'page') parameter.schema = structuredClone(PAGE_PARAMETER_SCHEMA);
    else if (parameter.name === 'include') parameter.schema = includeSchema(operation) ?? parameter.schema;
    else if (parameter.name === 'fields' && definitions.length > 0) parameter.schema = fieldsParameterSchema(definitions);
    if (parameter.schema.type === 'object') {
      parameter.style = 'deepObject';
      parameter.explode = true;
    }
  }
}

/**
 * Objects that name their members are closed unless they say otherwise: an answer with a
 * member the document does not name fails the contract test (test/support/openapi-contract.ts).
 * A schema's document form (DOCUMENT_FORM) replaces it here too.
 */
function closeObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closeObjects);
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as Schema;
  if (source[DOCUMENT_FORM]) return closeObjects(source[DOCUMENT_FORM]);
  const out: Schema = {};
  for (const [key, value] of Object.entries(source)) {
    out[key] = key === 'properties' || key === 'patternProperties' ? mapValues(value as Schema, closeObjects) : closeObjects(value);
  }
  if (out.properties && out.additionalProperties === undefined && out.patternProperties === undefined && !out.allOf) {
    out.additionalProperties = false;
  }
  return out;
}

function mapValues(record: Schema, map: (value: unknown) => unknown): Schema {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}

function exactOperation(path: string, method: string, operation: Operation): void {
  const key = `${method.toUpperCase()} ${path}`;
  const operationId = OPERATION_IDS[key];
  if (!operationId) throw new Error(`the OpenAPI document has no operationId for ${key}: name it in src/api/plugins/operation-ids.ts`);
  if (!operation.tags?.length) throw new Error(`the OpenAPI document has no tag for ${key}`);
  operation.operationId = operationId;
  describeQuery(operation);
  for (const media of Object.values(operation.requestBody?.content ?? {})) {
    if (media.schema) media.schema = closeObjects(media.schema) as Schema;
  }
  // A JSON body that requires no member may be left out (an action's `{data:{}}`, a run's input).
  const json = operation.requestBody?.content?.[JSONAPI_MEDIA_TYPE]?.schema;
  if (operation.requestBody && json && !(Array.isArray(json.required) && json.required.length > 0)) operation.requestBody.required = false;
  const responses = (operation.responses ??= {});
  for (const [status, response] of Object.entries(responses)) {
    for (const media of Object.values(response.content ?? {})) {
      if (Number(status) >= 400 && isErrorSchema(media.schema)) media.schema = ERROR_SCHEMA_REF;
      else if (media.schema) media.schema = closeObjects(media.schema) as Schema;
    }
  }
  for (const [status, description] of Object.entries(commonAnswers(path, method, operation))) {
    responses[status] ??= { description, content: { [JSONAPI_MEDIA_TYPE]: { schema: ERROR_SCHEMA_REF } } };
  }
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Makes the generated document exact: every operation named (operationId) and tagged, its
 * query objects deepObject with their members described, every status it can answer declared
 * with the JSON:API error document, and every object closed where it names its members.
 */
export function exactDocument<T extends { paths?: Record<string, unknown>; components?: Record<string, unknown> }>(document: T): T {
  const named = new Set<string>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (!operation) continue;
      exactOperation(path, method, operation);
      named.add(`${method.toUpperCase()} ${path}`);
    }
  }
  const stale = Object.keys(OPERATION_IDS).filter((key) => !named.has(key));
  if (stale.length > 0) throw new Error(`operation-ids.ts names operations the document lacks: ${stale.join(', ')}`);
  const components = (document.components ??= {}) as { schemas?: Record<string, unknown> };
  components.schemas = { ...components.schemas, ErrorDocument: closeObjects(structuredClone(ERROR_RESPONSE_SCHEMA)) };
  return document;
}
