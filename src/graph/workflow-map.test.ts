import { describe, expect, it } from 'vitest';
import { buildWorkspaceMap, type MapMember } from './workflow-map.js';

const member = (name: string, folder: string | null = null, status = 'inactive'): MapMember => ({
  id: `id-${name}`,
  name,
  status,
  folder_id: folder,
});
const calls = (...pairs: Array<[string, string]>) => pairs.map(([a, b]) => ({ caller_id: `id-${a}`, callee_id: `id-${b}` }));
const names = (columns: Array<Array<{ name: string }>>) => columns.map((column) => column.map((entry) => entry.name));
const folders = new Map([
  ['f1', 'Billing'],
  ['f2', 'Support'],
]);

describe('buildWorkspaceMap', () => {
  it('lays a chain out one column per call depth and leaves unconnected workflows standalone', () => {
    const map = buildWorkspaceMap([member('c'), member('a'), member('b'), member('lone')], calls(['a', 'b'], ['b', 'c']), folders);
    expect(map.systems).toHaveLength(1);
    expect(names(map.systems[0]!.columns)).toEqual([['a'], ['b'], ['c']]);
    expect(map.systems[0]!.edges).toEqual([
      ['id-a', 'id-b'],
      ['id-b', 'id-c'],
    ]);
    expect(map.systems[0]!.cycles).toEqual([]);
    expect(map.standalone.map((e) => e.name)).toEqual(['lone']);
  });

  it('places a diamond by its longest call chain, so every call points right', () => {
    const map = buildWorkspaceMap(
      ['a', 'b', 'c', 'd'].map((n) => member(n)),
      calls(['a', 'b'], ['a', 'c'], ['b', 'd'], ['c', 'd'], ['a', 'd']),
      folders,
    );
    expect(names(map.systems[0]!.columns)).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('places cycles deterministically from the entries and reports them', () => {
    // entry -> x -> y -> x (a cycle below an entry), and a pure cycle p -> q -> r -> p.
    const members = ['entry', 'x', 'y', 'p', 'q', 'r'].map((n) => member(n));
    const edges = calls(['entry', 'x'], ['x', 'y'], ['y', 'x'], ['q', 'r'], ['r', 'p'], ['p', 'q']);
    const first = buildWorkspaceMap(members, edges, folders);
    const again = buildWorkspaceMap([...members].reverse(), [...edges].reverse(), folders);
    expect(again).toEqual(first);
    const [below, pure] = first.systems;
    expect(names(below!.columns)).toEqual([['entry'], ['x'], ['y']]);
    expect(below!.cycles).toEqual([['id-x', 'id-y']]);
    // No entry: the first by name starts it.
    expect(names(pure!.columns)).toEqual([['p'], ['q'], ['r']]);
    expect(pure!.cycles).toEqual([['id-p', 'id-q', 'id-r']]);
  });

  it('reports a workflow calling itself as a cycle without moving it', () => {
    const map = buildWorkspaceMap([member('a'), member('b')], calls(['a', 'a'], ['a', 'b']), folders);
    expect(names(map.systems[0]!.columns)).toEqual([['a'], ['b']]);
    expect(map.systems[0]!.cycles).toEqual([['id-a']]);
    expect(buildWorkspaceMap([member('solo')], calls(['solo', 'solo']), folders).standalone.map((e) => e.name)).toEqual(['solo']);
  });

  it('labels a system with the folder most members are filed in and lists the strays', () => {
    const members = [member('a', 'f1'), member('b', 'f1'), member('c', 'f2'), member('d', null)];
    const map = buildWorkspaceMap(members, calls(['a', 'b'], ['b', 'c'], ['a', 'd']), folders);
    expect(map.systems[0]!.folder).toEqual({ id: 'f1', name: 'Billing' });
    expect(map.systems[0]!.strays).toEqual(['id-c', 'id-d']);
    const tied = buildWorkspaceMap([member('a', 'f2'), member('b', 'f1')], calls(['a', 'b']), folders);
    expect(tied.systems[0]!.folder).toEqual({ id: 'f1', name: 'Billing' });
    expect(tied.systems[0]!.strays).toEqual(['id-a']);
  });

  it('filters members by status before grouping and keeps only what search matches', () => {
    const members = [
      member('order intake', null, 'active'),
      member('billing', null, 'active'),
      member('draft helper', null, 'inactive'),
      member('other', null, 'active'),
      member('other child', null, 'active'),
    ];
    const edges = calls(['order intake', 'billing'], ['billing', 'draft helper'], ['other', 'other child']);
    const active = buildWorkspaceMap(members, edges, folders, { status: 'active' });
    expect(active.systems.map((s) => names(s.columns))).toEqual([
      [['order intake'], ['billing']],
      [['other'], ['other child']],
    ]);
    expect(active.standalone).toEqual([]);
    const searched = buildWorkspaceMap(members, edges, folders, { search: 'BILL' });
    expect(searched.systems.map((s) => names(s.columns))).toEqual([[['order intake'], ['billing'], ['draft helper']]]);
    expect(buildWorkspaceMap(members, edges, folders, { search: 'nothing' })).toEqual({ systems: [], standalone: [] });
  });

  it('ignores calls to workflows it was not given (deleted or filtered out) and repeated calls', () => {
    const map = buildWorkspaceMap(
      [member('a'), member('b')],
      [...calls(['a', 'b'], ['a', 'b']), { caller_id: 'id-a', callee_id: 'gone' }],
      folders,
    );
    expect(map.systems[0]!.edges).toEqual([['id-a', 'id-b']]);
  });
});
