import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SelectQueryBuilder } from 'kysely';
import qs from 'qs';
import { type ApiContext, apiUrl } from '../api-context.js';
import { JSONAPI_MEDIA_TYPE } from '../plugins/error-document.js';
import { parseFields, selectedAttributes } from './fields.js';
import { parseFilter } from './filter.js';
import { rejectInclude } from './include.js';
import { runListQuery } from './list-query.js';
import { parsePage } from './page.js';
import { columnOf, type ResourceDefinition } from './resource-definition.js';
import { JSONAPI_VERSION, toResourceObject, type ResourceObject } from './serialize.js';
import { parseSort } from './sort.js';

export function sendResource(
  reply: FastifyReply,
  data: ResourceObject,
  included?: ResourceObject[],
  meta?: Record<string, unknown>,
): FastifyReply {
  return reply.type(JSONAPI_MEDIA_TYPE).send({
    data,
    ...(included ? { included } : {}),
    links: { self: data.links.self },
    ...(meta ? { meta } : {}),
    jsonapi: JSONAPI_VERSION,
  });
}

/** Larger answers (big pages of graphs) are not worth the memory. */
const MAX_CACHED_BODY = 256 * 1024;

export interface ListOptions {
  definition: ResourceDefinition;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  base: SelectQueryBuilder<any, any, any>;
  path: string;
  /** False for global resources (the step catalog); otherwise relation filters are scoped to the workspace. */
  scoped?: boolean;
  /** Columns the serializer needs beyond the selected attributes. */
  extraColumns?: string[];
  toResource?: (row: Record<string, unknown>) => ResourceObject;
  included?: (rows: Record<string, unknown>[]) => Promise<ResourceObject[] | undefined>;
  /** Types `include` can add: `fields[<type>]` may name them, and their tables stamp the cache. */
  includedDefinitions?: ResourceDefinition[];
}

/** Tables a definition's relation filters can reach, nested ones included; fixed per definition. */
const relationTables = new WeakMap<ResourceDefinition, string[]>();

function reachableTables(definition: ResourceDefinition): string[] {
  let tables = relationTables.get(definition);
  if (!tables) {
    const found = new Set<string>();
    const visited = new Set<ResourceDefinition>();
    const visit = (current: ResourceDefinition) => {
      if (visited.has(current)) return;
      visited.add(current);
      found.add(current.table);
      for (const relation of Object.values(current.relationFilters ?? {})) visit(relation.resource());
    };
    visit(definition);
    tables = [...found];
    relationTables.set(definition, tables);
  }
  return tables;
}

/** Every table a list can read: its own, those its relation filters reach, and included types'. */
function tablesRead(definition: ResourceDefinition, included: ResourceDefinition[]): string[] {
  const reachable = reachableTables(definition);
  return included.length === 0 ? reachable : [...new Set([...reachable, ...included.map((d) => d.table)])];
}

/**
 * A list answer: filter, sort, page and sparse fieldsets from the query, links that keep the
 * caller's other parameters, and `meta.count` when asked. Only the columns needed for the
 * requested fields and the sort are read.
 */
export async function sendList(request: FastifyRequest, reply: FastifyReply, ctx: ApiContext, options: ListOptions): Promise<FastifyReply> {
  const query = request.query as Record<string, unknown>;
  const { definition } = options;
  // A list is a pure function of its URL, the workspace and the listed tables' rows, so its
  // serialised answer can be reused until one of those tables is written (the list benchmark:
  // reading and serialising 50 rows costs ~10 times what the rest of the request does).
  const cache = ctx.listCache;
  const cacheKey = `${request.auth.workspace.id} ${request.url}`;
  let stamp = cache ? cache.stamp(tablesRead(definition, options.includedDefinitions ?? [])) : null;
  if (typeof stamp === 'object' && stamp !== null) stamp = await stamp;
  const cached = stamp === null ? undefined : cache!.bodies.get(cacheKey, stamp);
  if (cached !== undefined) return reply.type(JSONAPI_MEDIA_TYPE).send(cached);
  if (!options.included) rejectInclude(query.include, definition);
  const filter = query.filter === undefined ? null : parseFilter(query.filter, definition);
  const sort = parseSort(query.sort ?? definition.defaultSort, definition);
  const page = parsePage(query.page);
  const attributes = selectedAttributes(definition, parseFields(query.fields, [definition, ...(options.includedDefinitions ?? [])]));

  const columns = new Set<string>(['id', ...(options.extraColumns ?? [])]);
  for (const name of attributes) columns.add(columnOf(definition, name));
  for (const key of sort) columns.add(key.column);
  const base = options.base.select([...columns].map((c) => `${definition.table}.${c}`));

  const selfPath = apiUrl(ctx, options.path);
  const buildLink = (pageParams: Record<string, string>) => {
    const { page: _page, ...rest } = query;
    // pageParams arrive as full parameter names (`page[after]`), so they are encoded as they are.
    const pageSearch = Object.entries(pageParams).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
    const search = [qs.stringify(rest), ...pageSearch].filter(Boolean).join('&');
    return `${selfPath}${search ? `?${search}` : ''}`;
  };
  const result = await runListQuery({
    base,
    definition,
    dialect: ctx.dialect,
    filter,
    sort,
    page,
    scope: options.scoped === false ? undefined : { column: 'workspace_id', value: request.auth.workspace.id },
    buildLink,
  });
  const rows = result.rows as Record<string, unknown>[];
  const toResource = options.toResource ?? ((row) => toResourceObject(definition, row, attributes, `${selfPath}/${String(row.id)}`));
  const included = options.included ? await options.included(rows) : undefined;
  const selfSearch = qs.stringify(query);
  const body = reply.serialize({
    data: rows.map(toResource),
    ...(included ? { included } : {}),
    links: { self: `${selfPath}${selfSearch ? `?${selfSearch}` : ''}`, ...result.links },
    ...(result.meta ? { meta: result.meta } : {}),
    jsonapi: JSONAPI_VERSION,
  }) as string;
  if (stamp !== null && body.length <= MAX_CACHED_BODY) {
    // Kept encoded: a 17 KB page would otherwise be UTF-8-encoded again on every answer.
    const bytes = Buffer.from(body);
    cache!.bodies.set(cacheKey, stamp, bytes);
    return reply.type(JSONAPI_MEDIA_TYPE).send(bytes);
  }
  return reply.type(JSONAPI_MEDIA_TYPE).send(body);
}
