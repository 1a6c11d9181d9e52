/**
 * The operations of the published OpenAPI document, as the fuzz needs them: method, path
 * template, parameters, whether a body is taken, and the resource a route serves (its type
 * and attribute schemas, read from the success response), from which valid bodies and list
 * queries are derived.
 */
export type Schema = Record<string, unknown>;

export interface Operation {
  method: string;
  /** OpenAPI path template, e.g. `/api/v1/workflows/{id}`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** The request body's media type, or null when the operation declares none. */
  bodyType: string | null;
  /** A list route (`data` is an array). */
  list: boolean;
  /** The JSON:API type of the resource the route answers with, if any. */
  resourceType: string | null;
  /** That resource's attribute schemas (empty for plain-JSON routes). */
  attributes: Record<string, Schema>;
  /** Kinds of the properties `data` may carry in the request body (the declared schema). */
  bodyData: Record<string, Schema>;
  /** The body can name other resources (a relationship or an `…_id` member): a create, a move. */
  bodyNamesResources: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

function at(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function firstContentSchema(content: unknown): Schema | undefined {
  if (content === null || typeof content !== 'object') return undefined;
  const first = Object.values(content as Record<string, { schema?: Schema }>)[0];
  return first?.schema;
}

export function operationsOf(document: Schema): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Record<string, Schema>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const parameters = (operation.parameters ?? []) as { in: string; name: string }[];
      const success = Object.entries((operation.responses ?? {}) as Record<string, Schema>).find(([status]) => status.startsWith('2'))?.[1];
      const data = at(firstContentSchema(success?.content), 'properties', 'data') as Schema | undefined;
      const list = data?.type === 'array';
      const resource = (list ? data?.items : data) as Schema | undefined;
      // A `const` is published as a one-value `enum`.
      const resourceType =
        at(resource, 'properties', 'type', 'const') ?? (at(resource, 'properties', 'type', 'enum') as unknown[] | undefined)?.[0];
      const requestBody = operation.requestBody as Schema | undefined;
      const bodySchema = firstContentSchema(requestBody?.content);
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        bodyType: requestBody ? (Object.keys((requestBody.content ?? {}) as Schema)[0] ?? null) : null,
        list,
        resourceType: typeof resourceType === 'string' ? resourceType : null,
        attributes: (at(resource, 'properties', 'attributes', 'properties') ?? {}) as Record<string, Schema>,
        bodyData: (at(bodySchema, 'properties', 'data', 'properties') ?? {}) as Record<string, Schema>,
        bodyNamesResources: /"relationships"|_id"/.test(JSON.stringify(bodySchema ?? {})),
      });
    }
  }
  return operations;
}

/** What a path parameter names, from its name and the path it sits in. */
export type IdKind = 'workflow' | 'folder' | 'execution' | 'node' | 'webhook' | 'other';

export function idKindOf(operation: Operation, param: string): IdKind {
  if (param === 'workflow_id') return 'workflow';
  if (param === 'workflow_execution_id') return 'execution';
  if (param === 'node_id') return 'node';
  if (param === 'webhook_id') return 'webhook';
  if (param === 'id') {
    if (operation.path.startsWith('/api/v1/workflows/')) return 'workflow';
    if (operation.path.startsWith('/api/v1/folders/')) return 'folder';
    if (operation.path.startsWith('/api/v1/executions/')) return 'execution';
  }
  return 'other';
}
