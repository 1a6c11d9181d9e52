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

export function sendResource(reply: FastifyReply, data: ResourceObject, included?: ResourceObject[]): FastifyReply {
  return reply.type(JSONAPI_MEDIA_TYPE).send({ data, ...(included ? { included } : {}), links: { self: data.links.self }, jsonapi: JSONAPI_VERSION });
}

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
}

/**
 * A list answer: filter, sort, page and sparse fieldsets from the query, links that keep the
 * caller's other parameters, and `meta.count` when asked. Only the columns needed for the
 * requested fields and the sort are read.
 */
export async function sendList(request: FastifyRequest, reply: FastifyReply, ctx: ApiContext, options: ListOptions): Promise<FastifyReply> {
  const query = request.query as Record<string, unknown>;
  const { definition } = options;
  if (!options.included) rejectInclude(query.include, definition);
  const filter = query.filter === undefined ? null : parseFilter(query.filter, definition);
  const sort = parseSort(query.sort ?? definition.defaultSort, definition);
  const page = parsePage(query.page);
  const attributes = selectedAttributes(definition, parseFields(query.fields, [definition]));

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
  return reply.type(JSONAPI_MEDIA_TYPE).send({
    data: rows.map(toResource),
    ...(included ? { included } : {}),
    links: { self: `${selfPath}${selfSearch ? `?${selfSearch}` : ''}`, ...result.links },
    ...(result.meta ? { meta: result.meta } : {}),
    jsonapi: JSONAPI_VERSION,
  });
}
