import type { FastifyReply, FastifyRequest } from 'fastify';
import qs from 'qs';
import { canonicalTimestamp, formatMicros } from '../../../lib/clock.js';
import { isUuid } from '../../../lib/ids.js';
import type { StoreRow } from '../../../store/store-repository.js';
import { StoreRowRepository, type FeedPosition, type StoreRowRecord } from '../../../store/store-row-repository.js';
import { type ApiContext, apiUrl } from '../../api-context.js';
import { JSONAPI_MEDIA_TYPE } from '../../plugins/error-document.js';
import { parseFields, selectedAttributes } from '../../jsonapi/fields.js';
import { invalidParameter } from '../../jsonapi/filter-operand.js';
import { parseFilter } from '../../jsonapi/filter.js';
import { filterCondition } from '../../jsonapi/filter-sql.js';
import { rejectInclude } from '../../jsonapi/include.js';
import { parsePage, type PageParams } from '../../jsonapi/page.js';
import { columnOf } from '../../jsonapi/resource-definition.js';
import { toResourceObject, type ResourceObject } from '../../jsonapi/serialize.js';
import type { FeedKind } from '../../../services/stores/feed-cursor.js';
import { feedDocument } from './feed-document.js';
import { rowFilterDefinition } from './row-filter.js';
import { storeRowResource } from './store-resource.js';

/** Where a feed starts when neither a cursor nor a time says otherwise. */
const START = formatMicros(0);

export function rowUrl(ctx: ApiContext, storeId: string, key: string): string {
  return apiUrl(ctx, `/stores/${storeId}/rows/${encodeURIComponent(key)}`);
}

export function rowResource(ctx: ApiContext, storeId: string, row: Partial<StoreRowRecord>, attributes: readonly string[]): ResourceObject {
  return toResourceObject(storeRowResource, { ...row, id: row.key }, attributes, rowUrl(ctx, storeId, row.key!));
}

/**
 * `GET /stores/:store_id/rows`: the change feed. Rows come in (updated_at, key) order after the
 * cursor, and `links.next` is always there: after the last row shown, or where the request
 * started when the page is empty. A consumer that keeps following it sees every write once,
 * and a replaced row again after the cursor (docs/stores.md explains why that is exact).
 */
export async function sendRowFeed(request: FastifyRequest, reply: FastifyReply, ctx: ApiContext, store: StoreRow): Promise<FastifyReply> {
  const query = request.query as Record<string, unknown>;
  rejectInclude(query.include, storeRowResource);
  if (query.sort !== undefined && query.sort !== 'updated_at') {
    throw invalidParameter('sort', 'the row list is the change feed, ordered by updated_at then key: sort takes only updated_at');
  }
  const page = feedPage(query.page, true);
  const since = timestampParameter(query.updated_since, 'updated_since');
  const workflowId = query.workflow_id;
  if (workflowId !== undefined && !isUuid(workflowId)) throw invalidParameter('workflow_id', 'workflow_id must be a workflow id (UUID)');
  const attributes = selectedAttributes(storeRowResource, parseFields(query.fields, [storeRowResource]));
  // The filter's definition parses the store's schema: only for a request that filters.
  let filter = null;
  if (query.filter !== undefined) {
    const definition = rowFilterDefinition(store, ctx.dialect);
    filter = filterCondition(parseFilter(query.filter, definition), definition, ctx.dialect, { scope: null });
  }
  const after = startPosition(ctx, page, 'rows', store.id, since);

  const columns = new Set<keyof StoreRowRecord>(['key', 'updated_at']);
  for (const name of attributes) columns.add(columnOf(storeRowResource, name) as keyof StoreRowRecord);
  const repo = new StoreRowRepository(ctx.db, store);
  const filters = {
    ...(since !== undefined ? { since } : {}),
    ...(workflowId !== undefined ? { workflowId: (workflowId as string).toLowerCase() } : {}),
    condition: filter,
  };
  const rows = await repo.feed({ ...filters, after, limit: page.limit, columns: [...columns] });
  const last = rows.at(-1);
  const next = last ? { at: last.updated_at!, key: last.key! } : after;
  const path = `/stores/${store.id}/rows`;
  const links = {
    self: selfLink(ctx, path, query),
    next: nextLink(ctx, path, query, page, ctx.feedCursors.encode('rows', store.id, next)),
  };
  const meta = page.count ? { meta: { count: await repo.countFeed(filters) } } : {};
  // The document as text, each row's stored JSON spliced in as it is (feed-document.ts).
  return reply.type(JSONAPI_MEDIA_TYPE).send(feedDocument(rows, attributes, (key) => rowUrl(ctx, store.id, key), { links, ...meta }));
}

/** `GET /stores/:id/deletions`: tombstones in (deleted_at, key) order, with a cursor like the rows feed's. */
export async function sendDeletionFeed(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: ApiContext,
  store: StoreRow,
): Promise<FastifyReply> {
  const query = request.query as Record<string, unknown>;
  const page = feedPage(query.page, false);
  const since = timestampParameter(query.since, 'since');
  const after = startPosition(ctx, page, 'deletions', store.id, since);
  const tombstones = await new StoreRowRepository(ctx.db, store).deletions(after, since, page.limit);
  const last = tombstones.at(-1);
  const next = last ? { at: last.deleted_at, key: last.key } : after;
  const path = `/stores/${store.id}/deletions`;
  return reply.type('application/json').send({
    data: tombstones.map((t) => ({ key: t.key, deleted_at: t.deleted_at, workflow_id: t.workflow_id })),
    links: { next: nextLink(ctx, path, query, page, ctx.feedCursors.encode('deletions', store.id, next)) },
  });
}

/** Feeds page forward by cursor only: no offsets, no backward cursor. */
function feedPage(raw: unknown, countable: boolean): PageParams {
  const page = parsePage(raw);
  if (page.offset !== undefined)
    throw invalidParameter('page[offset]', 'this feed pages with page[after] (the cursor in links.next), not offsets');
  if (page.before !== undefined)
    throw invalidParameter('page[before]', 'this feed pages forward only, with page[after] (the cursor in links.next)');
  if (page.count && !countable) throw invalidParameter('page[count]', 'the deletions feed has no count');
  return page;
}

function timestampParameter(raw: unknown, parameter: string): string | undefined {
  if (raw === undefined) return undefined;
  const value = typeof raw === 'string' ? canonicalTimestamp(raw) : null;
  if (value === null) throw invalidParameter(parameter, `${parameter} must be an RFC 3339 timestamp, e.g. 2026-11-01T00:00:00Z`);
  return value;
}

/** The cursor's position; without one, just before everything at `since` (or ever). */
function startPosition(ctx: ApiContext, page: PageParams, kind: FeedKind, storeId: string, since: string | undefined): FeedPosition {
  if (page.after !== undefined) return ctx.feedCursors.decode(page.after, kind, storeId, 'page[after]');
  return { at: since ?? START, key: '' };
}

function selfLink(ctx: ApiContext, path: string, query: Record<string, unknown>): string {
  const search = qs.stringify(query);
  return `${apiUrl(ctx, path)}${search ? `?${search}` : ''}`;
}

/** The request's link with `page[after]` moved to `cursor`; its other parameters are kept. */
function nextLink(ctx: ApiContext, path: string, query: Record<string, unknown>, page: PageParams, cursor: string): string {
  const { page: _page, ...rest } = query;
  const pageParams: [string, string][] = [
    ['page[limit]', String(page.limit)],
    ...(page.count ? [['page[count]', 'true'] as [string, string]] : []),
    ['page[after]', cursor],
  ];
  const search = [qs.stringify(rest), ...pageParams.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)]
    .filter(Boolean)
    .join('&');
  return `${apiUrl(ctx, path)}?${search}`;
}
