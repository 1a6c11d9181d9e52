import type { Kysely } from 'kysely';
import type { ResourceDefinition } from '../../src/api/jsonapi/resource-definition.js';
import type { SqlDialect } from '../../src/db/dialect/dialect.js';

/**
 * A table with a column of every attribute kind, and a related table, for the JSON:API query
 * tests. Rows are numbered 1..12 in workspace A (ids sort in that order); workspace B holds a
 * look-alike maker and gadget that a correctly scoped query never reaches.
 */
export const WS_A = '0190a000-0000-7000-8000-00000000aaaa';
export const WS_B = '0190a000-0000-7000-8000-00000000bbbb';

export const gadgetId = (n: number) => `0190a000-0000-7000-8000-0000000000${String(n).padStart(2, '0')}`;
export const M1 = '0190a000-0000-7000-8000-0000000001a1';
export const M2 = '0190a000-0000-7000-8000-0000000001a2';
export const M3 = '0190a000-0000-7000-8000-0000000001a3';
export const day = (n: number) => `2026-01-${String(n).padStart(2, '0')}T10:00:00.000000Z`;

export type GadgetTables = {
  makers: { id: string; workspace_id: string; name: string; country: string; parent_id: string | null };
  gadgets: {
    id: string;
    workspace_id: string;
    name: string;
    nickname: string | null;
    count: number;
    rank: number | null;
    weight: number;
    active: boolean | number;
    made_at: string;
    size_label: string;
    spec: string | null;
    maker_id: string | null;
  };
};

export const makerDefinition: ResourceDefinition = {
  type: 'maker',
  table: 'makers',
  attributes: { name: { kind: 'string' }, country: { kind: 'string' }, parent_id: { kind: 'uuid', nullable: true } },
  relationFilters: { parent: { resource: () => makerDefinition, localColumn: 'parent_id' } },
  defaultSort: 'name',
};

export const gadgetDefinition: ResourceDefinition = {
  type: 'gadget',
  table: 'gadgets',
  attributes: {
    name: { kind: 'string', default: true },
    nickname: { kind: 'string', nullable: true },
    count: { kind: 'integer' },
    rank: { kind: 'integer', nullable: true },
    weight: { kind: 'number' },
    active: { kind: 'boolean' },
    made_at: { kind: 'timestamp' },
    size: { kind: 'enum', values: ['small', 'medium', 'large'], column: 'size_label' },
    spec: { kind: 'object', nullable: true },
    maker_id: { kind: 'uuid', nullable: true },
  },
  relationFilters: { maker: { resource: () => makerDefinition, localColumn: 'maker_id' } },
  defaultSort: '-made_at',
};

type Row = [
  name: string,
  nickname: string | null,
  count: number,
  rank: number | null,
  weight: number,
  active: boolean,
  madeAt: string,
  size: string,
  spec: string | null,
  maker: string | null,
];

/** Row n of workspace A is GADGETS[n - 1]. */
export const GADGETS: Row[] = [
  ['Alpha', 'al', 3, 1, 1.5, true, day(1), 'small', '{"a":1}', M1],
  ['alpha', null, 3, null, 2.25, false, day(2), 'large', null, M2],
  ['Ärger', 'Äx', 1, 2, -0.5, true, day(3), 'medium', '{"b":[1,2]}', M1],
  ['ärmel', 'äx', 7, null, 10, false, day(4), 'small', null, null],
  ['100% pure', 'p', 5, 3, 3.75, true, day(5), 'large', '{"a":1}', M2],
  // References workspace B's maker, which relation filters must not see.
  ['100 pure', null, 5, null, 3.75, true, day(6), 'medium', null, M3],
  ['snake_case', 'sc', 0, 4, 0, false, day(7), 'small', '"text"', null],
  ['snakeXcase', null, -2, null, 1e6, true, day(8), 'large', null, M1],
  ['back\\slash', 'b\\s', 2, 5, 2.25, false, day(9), 'medium', '[1,2]', null],
  ['Beta', 'beta', 3, null, 1.5, true, day(1), 'small', null, M2],
  ['beta', 'Beta', 9, 6, 7, false, day(10), 'large', '{"a":2}', null],
  ['Gamma', null, 3, null, 2.25, false, day(11), 'medium', null, M1],
];

export async function createGadgetTables(db: Kysely<GadgetTables>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  await db.schema
    .createTable('makers')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('country', text, (c) => c.notNull())
    .addColumn('parent_id', text)
    .execute();
  await db.schema
    .createTable('gadgets')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('nickname', text)
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('rank', 'integer')
    .addColumn('weight', dialect.doubleType, (c) => c.notNull())
    .addColumn('active', dialect.booleanType, (c) => c.notNull())
    .addColumn('made_at', text, (c) => c.notNull())
    .addColumn('size_label', text, (c) => c.notNull())
    .addColumn('spec', text)
    .addColumn('maker_id', text)
    .execute();

  await db
    .insertInto('makers')
    .values([
      { id: M1, workspace_id: WS_A, name: 'Acme', country: 'DE', parent_id: null },
      { id: M2, workspace_id: WS_A, name: 'Bolt Works', country: 'US', parent_id: M1 },
      // Same name as M1 and a child of it, but in workspace B.
      { id: M3, workspace_id: WS_B, name: 'Acme', country: 'FR', parent_id: M1 },
    ])
    .execute();
  const row = (id: string, workspace: string, [name, nickname, count, rank, weight, active, madeAt, size, spec, maker]: Row) => ({
    id,
    workspace_id: workspace,
    name,
    nickname,
    count,
    rank,
    weight,
    active: dialect.bool(active),
    made_at: madeAt,
    size_label: size,
    spec,
    maker_id: maker,
  });
  await db
    .insertInto('gadgets')
    .values([...GADGETS.map((values, index) => row(gadgetId(index + 1), WS_A, values)), row(gadgetId(99), WS_B, GADGETS[0]!)])
    .execute();
}

/** The row number (1..12, 99 for workspace B) of a gadget id. */
export function gadgetNumber(id: string): number {
  return Number(id.slice(-2));
}
