import fc from 'fast-check';
import type { Operation, Schema } from './openapi-operations.js';
import type { FuzzContext } from './fuzz-requests.js';
import { deep, deepText, oddJson, oddNumber, oddString, schemaValue } from './fuzz-values.js';

/**
 * Request bodies for an operation: valid envelopes derived from its schemas (the resource's
 * attributes and relationships, or the action's declared `data` members), those envelopes
 * mutated at one place, and bytes that are not the declared JSON at all.
 */
type Json = unknown;

/** Stands for the path's id in a generated body; the request builder puts the real one in. */
export const PATH_ID = '__path_id__';

const OVERSIZED = [JSON.stringify({ data: { name: 'x', description: 'y'.repeat(1_100_000) } }), deepText(20_000), deepText(3000)];
const graphs = new WeakMap<FuzzContext, fc.Arbitrary<Json>>();

function graphArbitrary(ctx: FuzzContext): fc.Arbitrary<Json> {
  const known = graphs.get(ctx);
  if (known) return known;
  const nodeId = fc.constantFrom('a', 'b', 'c', 'hook', 'n1', '', ' ', '\u0000', 'x'.repeat(300));
  const workflowIds = [...ctx.own.workflow, ...ctx.foreign.workflow];
  const config = fc.oneof(
    { weight: 3, arbitrary: fc.constant({}) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { verification: { method: 'none' } },
        { verification: { method: 'hmac', format: 'github', secret: 's' } },
        { verification: { method: 'bogus' } },
        { response_mode: 'last_step', timeout_ms: 1 },
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(...workflowIds).map((id) => ({ workflow_id: id, input: '{{ trigger.body }}', wait: true })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { values: { a: '{{ 1 + }}' } },
        { condition: '{{ true }}' },
        { items: '{{ [1,2,3] }}' },
        { code: 'return input' },
        { duration_ms: 1 },
      ),
    },
    { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), oddJson, { maxKeys: 3 }) },
  );
  const node = fc.record(
    {
      id: nodeId,
      type: fc.constantFrom(...ctx.stepTypes, 'nope', ''),
      config,
      position: fc.record({ x: oddNumber, y: oddNumber }),
      name: oddString,
      disabled: fc.boolean(),
      retry: fc.record({
        max_attempts: fc.integer({ min: -1, max: 20 }),
        backoff_ms: fc.integer({ min: -1, max: 100_000 }),
        backoff: fc.constantFrom('fixed', 'exponential', 'nope'),
      }),
      on_error: fc.constantFrom('fail', 'continue', 'nope'),
    },
    { requiredKeys: ['id', 'type', 'config', 'position'] },
  );
  const edge = fc.record(
    {
      source: nodeId,
      target: nodeId,
      source_port: fc.constantFrom('out', 'body', 'true', 'nope'),
      target_port: fc.constantFrom('in', 'nope'),
    },
    { requiredKeys: ['source', 'target'] },
  );
  const settings = fc.record(
    { concurrency_limit: fc.oneof(fc.integer({ min: -1, max: 2000 }), fc.constant(null)), save_step_payloads: fc.boolean() },
    { requiredKeys: [] },
  );
  const graph = fc.record(
    { nodes: fc.array(node, { maxLength: 6 }), edges: fc.array(edge, { maxLength: 6 }), settings },
    { requiredKeys: ['nodes', 'edges'] },
  );
  graphs.set(ctx, graph);
  return graph;
}

/** `{data: …}` as the operation expects it, valid for its schema most of the time. */
function validBody(ctx: FuzzContext, operation: Operation): fc.Arbitrary<Json> {
  const ids = [...ctx.own.workflow, ...ctx.own.folder, ...ctx.foreign.workflow, ...ctx.foreign.folder];
  if (operation.resourceType && Object.keys(operation.bodyData).length === 0) {
    const names = Object.keys(operation.attributes);
    const attributes = fc
      .subarray(names)
      .chain((chosen) =>
        fc
          .tuple(...chosen.map((name) => schemaValue(operation.attributes[name], ids)))
          .map((values) => Object.fromEntries(chosen.map((name, i) => [name, values[i]]))),
      );
    const folder = fc.oneof(fc.constantFrom(...ctx.own.folder, ...ctx.foreign.folder), fc.uuid());
    const relationships = fc.option(
      fc
        .tuple(fc.constantFrom('folder', 'parent', 'nope'), folder, fc.boolean())
        .map(([name, id, isNull]) => ({ [name]: { data: isNull ? null : { type: 'workflow-folder', id } } })),
      { nil: undefined },
    );
    const envelope = fc
      .tuple(
        attributes,
        relationships,
        fc.constantFrom(operation.resourceType, operation.resourceType, operation.resourceType, 'workflow', 'nope'),
      )
      .map(([attrs, rels, type]) => ({
        data: {
          type,
          ...(operation.pathParams.includes('id') ? { id: PATH_ID } : {}),
          attributes: attrs,
          ...(rels ? { relationships: rels } : {}),
        },
      }));
    const flat = attributes.map((attrs) => ({ data: attrs }));
    // What a well-behaved client sends, so the success paths are exercised too.
    const plain = fc
      .tuple(fc.string({ minLength: 1, maxLength: 30 }), fc.option(fc.string({ maxLength: 60 }), { nil: undefined }))
      .map(([name, description]) => ({
        data: {
          type: operation.resourceType,
          ...(operation.pathParams.includes('id') ? { id: PATH_ID } : {}),
          attributes: { name, ...(description !== undefined ? { description } : {}) },
        },
      }));
    return fc.oneof({ weight: 3, arbitrary: envelope }, { weight: 1, arbitrary: flat }, { weight: 2, arbitrary: plain });
  }
  const members = Object.entries(operation.bodyData);
  if (members.length === 0) return fc.constantFrom({}, { data: {} }, null);
  const values = members.map(([name, schema]) =>
    name === 'graph' ? graphArbitrary(ctx) : name === 'input' ? oddJson : schemaValue(schema as Schema, ids),
  );
  return fc.tuple(fc.subarray(members.map(([name]) => name)), fc.tuple(...values)).map(([chosen, generated]) => ({
    data: Object.fromEntries(members.map(([name], i) => [name, generated[i]]).filter(([name]) => chosen.includes(name as string))),
  }));
}

/** The body with one place replaced by an odd value, a member dropped or added, or reshaped. */
function mutate(body: Json): fc.Arbitrary<Json> {
  const paths: string[][] = [];
  const walk = (value: unknown, path: string[]) => {
    paths.push(path);
    if (value !== null && typeof value === 'object' && path.length < 6)
      for (const [key, child] of Object.entries(value)) walk(child, [...path, key]);
  };
  walk(body, []);
  const replaceAt = (path: string[], replacement: unknown): unknown => {
    if (path.length === 0) return replacement;
    const copy: Record<string, unknown> = Array.isArray(body) ? ({ ...body } as Record<string, unknown>) : JSON.parse(JSON.stringify(body));
    let cursor = copy;
    for (const key of path.slice(0, -1)) cursor = cursor[key] as Record<string, unknown>;
    if (replacement === undefined) delete cursor[path[path.length - 1]!];
    else cursor[path[path.length - 1]!] = replacement;
    return copy;
  };
  return fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...paths), oddJson).map(([path, value]) => replaceAt(path, value)) },
    { weight: 1, arbitrary: fc.constantFrom(...paths).map((path) => replaceAt(path, undefined)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { data: [body] },
        { data: 'x' },
        { data: null },
        { errors: [] },
        [body],
        { ...(body as object), extra: 1 },
        { data: { ...((body as { data?: object } | null)?.data ?? {}), unknown_member: deep(3, 'object') } },
      ),
    },
  );
}

/** Bytes that are not the JSON document the route expects. */
function notJson(text: string): fc.Arbitrary<string | Buffer> {
  return fc.oneof(
    fc.nat(Math.max(0, text.length - 1)).map((cut) => text.slice(0, cut)),
    fc.constantFrom(
      `\ufeff${text}`,
      `${text}}`,
      `${text} trailing`,
      text.replace(/"/g, "'"),
      '',
      ' ',
      'null',
      '[]',
      '{"data": {"a": 1, "a": 2}}',
      'NaN',
      '{"data": 01}',
      '{"data": "\\ud800"}',
      '{"data": "\\u0000"}',
    ),
    fc.constantFrom(
      Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
      Buffer.from('{"data":{"name":"\xff\xfe"}}', 'latin1'),
      Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]),
    ),
  );
}

/** Built once per operation: the id of the path is filled in later (PATH_ID). */
export function bodyFor(ctx: FuzzContext, operation: Operation): fc.Arbitrary<string | Buffer | undefined> {
  if (operation.bodyType === null) {
    return fc.oneof(
      { weight: 8, arbitrary: fc.constant(undefined) },
      {
        weight: 2,
        arbitrary: fc.oneof(
          fc.constantFrom('', '{}', '{"data":{}}', '{"data":'),
          oddJson.map((v) => JSON.stringify(v) ?? 'null'),
        ),
      },
    );
  }
  if (operation.bodyType === '*/*') {
    return fc.oneof(
      fc.constant(undefined),
      oddJson.map((v) => JSON.stringify(v) ?? 'null'),
      fc.constantFrom('a=1&b=2&a=3&__proto__[x]=1', 'plain text', '<xml/>', '{"broken":'),
      fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
    );
  }
  return validBody(ctx, operation).chain((body) => {
    const text = JSON.stringify(body) ?? 'null';
    return fc.oneof(
      { weight: 5, arbitrary: fc.constant<string | Buffer | undefined>(text) },
      { weight: 3, arbitrary: mutate(body).map((mutated) => JSON.stringify(mutated) ?? 'null') },
      { weight: 2, arbitrary: notJson(text) },
      { weight: 1, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom(...OVERSIZED) },
    );
  });
}
