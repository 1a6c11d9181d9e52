import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import { sqliteDialect } from '../../db/dialect/sqlite.js';
import { decodeCursor, encodeCursor, keysetCondition } from './cursor.js';
import type { ResourceDefinition } from './resource-definition.js';
import { parseSort, reverseSort } from './sort.js';
import { expectInvalidParameter } from '../../../test/support/expect-invalid-parameter.js';

const gadget: ResourceDefinition = {
  type: 'gadget',
  table: 'gadgets',
  attributes: {
    name: { kind: 'string' },
    nickname: { kind: 'string', nullable: true },
    count: { kind: 'integer' },
    weight: { kind: 'number' },
    active: { kind: 'boolean' },
    made_at: { kind: 'timestamp' },
    size: { kind: 'enum', values: ['small', 'large'] },
  },
  defaultSort: 'name',
};

const ID = '0190a000-0000-7000-8000-0000000000aa';
const ROW = { id: ID, name: 'Ä', count: '9007199254740991', weight: 0.1, active: 1, made_at: '2026-01-02T03:04:05.000006Z', size: 'large' };
const SORT = parseSort('-made_at,name,count,weight,active,size', gadget);

const offline = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

function tokenOf(payload: unknown): string {
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

const INVALID = 'page[after] is not a valid cursor; use the links.next or links.prev of a previous page';

describe('cursors', () => {
  it('round-trips the sort values of a row, normalising driver representations', () => {
    const token = encodeCursor('gadget', SORT, ROW);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(token, 'gadget', SORT, 'page[after]')).toEqual([
      '2026-01-02T03:04:05.000006Z',
      'Ä',
      9007199254740991,
      0.1,
      true,
      'large',
      ID,
    ]);
    expect(JSON.parse(Buffer.from(token, 'base64url').toString())).toEqual({
      t: 'gadget',
      s: '-made_at,name,count,weight,active,size,-id',
      v: ['2026-01-02T03:04:05.000006Z', 'Ä', 9007199254740991, 0.1, true, 'large', ID],
    });
  });

  it('refuses a cursor of another resource type or another sort', () => {
    const token = encodeCursor('gadget', SORT, ROW);
    expectInvalidParameter(
      () => decodeCursor(token, 'widget', SORT, 'page[after]'),
      'page[after]',
      'page[after] was issued for another list or sort; this list is widget sorted by -made_at,name,count,weight,active,size,-id',
    );
    const other = parseSort('name', gadget);
    expectInvalidParameter(
      () => decodeCursor(token, 'gadget', other, 'page[before]'),
      'page[before]',
      'page[before] was issued for another list or sort; this list is gadget sorted by name,id',
    );
  });

  it.each([
    ['not base64url', 'name', 'abc+/='],
    ['not JSON', 'name', Buffer.from('{nope').toString('base64url')],
    ['not an object', 'name', tokenOf([1, 2])],
    ['missing values', 'name', tokenOf({ t: 'gadget', s: 'name,id' })],
    ['too few values', 'name', tokenOf({ t: 'gadget', s: 'name,id', v: ['a'] })],
    ['a number for a string key', 'name', tokenOf({ t: 'gadget', s: 'name,id', v: [1, ID] })],
    ['a non-UUID id', 'name', tokenOf({ t: 'gadget', s: 'name,id', v: ['a', 'x'] })],
    ['a non-canonical timestamp', 'made_at', tokenOf({ t: 'gadget', s: 'made_at,id', v: ['2026-01-02T03:04:05Z', ID] })],
    ['an unsafe integer', 'count', tokenOf({ t: 'gadget', s: 'count,id', v: [2 ** 60, ID] })],
    ['a string for a number key', 'weight', tokenOf({ t: 'gadget', s: 'weight,id', v: ['1', ID] })],
    ['a number for a boolean key', 'active', tokenOf({ t: 'gadget', s: 'active,id', v: [1, ID] })],
    ['a value outside the enum', 'size', tokenOf({ t: 'gadget', s: 'size,id', v: ['huge', ID] })],
    ['an oversized token', 'name', 'a'.repeat(5000)],
  ])('refuses a tampered cursor: %s', (_case, sortText, token) => {
    expectInvalidParameter(() => decodeCursor(token, 'gadget', parseSort(sortText, gadget), 'page[after]'), 'page[after]', INVALID);
  });

  it('refuses any cursor on a sort with a nullable key', () => {
    const sort = parseSort('nickname', gadget);
    const token = encodeCursor('gadget', sort, { id: ID, nickname: 'x' });
    expectInvalidParameter(
      () => decodeCursor(token, 'gadget', sort, 'page[before]'),
      'page[before]',
      "page[before] cannot be used with sort on 'nickname', which can be null; page with page[offset] instead",
    );
  });

  it('refuses to encode a row that lacks a sort column', () => {
    expect(() => encodeCursor('gadget', parseSort('name', gadget), { id: ID })).toThrow(
      "cannot encode a cursor: the row has no value for sort column 'name'",
    );
  });
});

describe('keysetCondition', () => {
  it('expands the lexicographic comparison with each key direction and encodes booleans', () => {
    const sort = parseSort('-active,name', gadget);
    const compiled = keysetCondition(sort, [true, 'b', ID], sqliteDialect, 'g').compile(offline);
    expect(compiled.sql).toBe(
      '("g"."active" <= ? AND (("g"."active" < ?) OR ("g"."active" = ? AND "g"."name" > ?) OR ("g"."active" = ? AND "g"."name" = ? AND "g"."id" < ?)))',
    );
    expect(compiled.parameters).toEqual([1, 1, 1, 'b', 1, 'b', ID]);
  });

  it('flips every comparison for the reversed sort of a backward walk', () => {
    const sort = reverseSort(parseSort('name', gadget));
    const compiled = keysetCondition(sort, ['b', ID], sqliteDialect).compile(offline);
    expect(compiled.sql).toBe('("name" <= ? AND (("name" < ?) OR ("name" = ? AND "id" < ?)))');
  });
});
