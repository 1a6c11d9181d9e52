import type { StoreRowRecord } from '../../../store/store-row-repository.js';
import { JSONAPI_VERSION } from '../../jsonapi/serialize.js';
import { storeRowResource } from './store-resource.js';

interface FeedMembers {
  links: { self: string; next: string };
  meta?: { count: number };
}

const VERSION = JSON.stringify(JSONAPI_VERSION);
const ATTRIBUTES = Object.entries(storeRowResource.attributes);

/**
 * A page of the change feed as the JSON text the route's response schema describes (members
 * in the schema's order: data, links, meta, jsonapi; in each row type, id, attributes in the
 * resource's order, links), written here instead of by the serializer: each row's `row` is
 * stored as the JSON.stringify text of an object (store/store-write.ts, the restore), so it is
 * spliced in as it is, where the serializer needed it parsed into objects first and then wrote
 * it back out string by string. At 100 rows a page that was about a third of the page's CPU
 * time (bench:stores profile of the first page at 1,000,000 rows), and most of its garbage.
 */
export function feedDocument(
  rows: readonly Partial<StoreRowRecord>[],
  attributes: readonly string[],
  selfOf: (key: string) => string,
  members: FeedMembers,
): string {
  const selected = new Set(attributes);
  const shown = ATTRIBUTES.filter(([name]) => selected.has(name)).map(([name, spec]) => ({
    prefix: `${JSON.stringify(name)}:`,
    column: (spec.column ?? name) as keyof StoreRowRecord,
    raw: spec.kind === 'object',
  }));
  const data: string[] = [];
  for (const row of rows) {
    const parts: string[] = [];
    for (const { prefix, column, raw } of shown) parts.push(prefix + valueText(row[column], raw));
    const key = row.key!;
    data.push(
      `{"type":"store-row","id":${JSON.stringify(key)},"attributes":{${parts.join(',')}},"links":{"self":${JSON.stringify(selfOf(key))}}}`,
    );
  }
  const meta = members.meta ? `,"meta":${JSON.stringify(members.meta)}` : '';
  return `{"data":[${data.join(',')}],"links":${JSON.stringify(members.links)}${meta},"jsonapi":${VERSION}}`;
}

/** A stored value as JSON: JSON text (`raw`) as it is, anything else stringified; absent is null. */
function valueText(value: unknown, raw: boolean): string {
  if (value === null || value === undefined) return 'null';
  if (raw && typeof value === 'string') return value;
  return JSON.stringify(value);
}
