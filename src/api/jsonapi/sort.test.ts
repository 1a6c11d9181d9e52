import { describe, expect, it } from 'vitest';
import type { ResourceDefinition } from './resource-definition.js';
import { formatSort, parseSort, reverseSort } from './sort.js';
import { expectInvalidParameter } from '../../../test/support/expect-invalid-parameter.js';

const gadget: ResourceDefinition = {
  type: 'gadget',
  table: 'gadgets',
  attributes: {
    name: { kind: 'string' },
    nickname: { kind: 'string', nullable: true },
    size: { kind: 'enum', values: ['small', 'large'] },
    made_at: { kind: 'timestamp', column: 'made_on' },
    spec: { kind: 'object' },
    layout: { kind: 'object', sortable: true },
    rank: { kind: 'integer', sortable: false },
  },
  defaultSort: '-made_at',
};

function expectInvalidSort(raw: unknown, detail: string): void {
  expectInvalidParameter(() => parseSort(raw, gadget), 'sort', detail);
}

describe('parseSort', () => {
  it('reads directions and columns, and appends id in the first key direction', () => {
    expect(parseSort('-made_at,name', gadget)).toEqual([
      { attribute: 'made_at', column: 'made_on', direction: 'desc', kind: 'timestamp', nullable: false },
      { attribute: 'name', column: 'name', direction: 'asc', kind: 'string', nullable: false },
      { attribute: 'id', column: 'id', direction: 'desc', kind: 'uuid', nullable: false },
    ]);
  });

  it('keeps an explicit id where it stands instead of appending another', () => {
    expect(formatSort(parseSort('id,name', gadget))).toBe('id,name');
    expect(formatSort(parseSort('-id', gadget))).toBe('-id');
  });

  it('uses the definition default sort when the request has none', () => {
    expect(formatSort(parseSort(undefined, gadget))).toBe('-made_at,-id');
  });

  it('marks nullable keys and carries enum values', () => {
    const [nickname, size] = parseSort('nickname,size', gadget);
    expect(nickname?.nullable).toBe(true);
    expect(size?.values).toEqual(['small', 'large']);
  });

  it('sorts an object attribute only when the definition allows it', () => {
    expect(formatSort(parseSort('layout', gadget))).toBe('layout,id');
    expectInvalidSort('spec', "gadget cannot be sorted by 'spec'");
    expectInvalidSort('-rank', "gadget cannot be sorted by 'rank'");
  });

  it('refuses unknown, repeated and empty fields, and a sort that is not one string', () => {
    expectInvalidSort('colour', "'colour' is not an attribute of gadget");
    expectInvalidSort(' name', "' name' is not an attribute of gadget");
    expectInvalidSort('name,-name', "sort names 'name' more than once");
    expectInvalidSort('name,,size', "sort has an empty field in 'name,,size'");
    expectInvalidSort('', "sort has an empty field in ''");
    expectInvalidSort('-', "sort has an empty field in '-'");
    expectInvalidSort(['name', 'size'], 'sort takes one comma-separated list, e.g. sort=-created_at,name');
  });

  it('reverses every direction for backward walks', () => {
    expect(formatSort(reverseSort(parseSort('-made_at,name', gadget)))).toBe('made_at,-name,id');
  });
});
