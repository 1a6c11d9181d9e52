/**
 * The workspace map (GET /workflows/map): workflows connected through calls grouped into
 * systems laid out in columns by call depth, the rest standalone. Pure: the service reads the
 * rows and the call edges (store/workflow-call-repository.ts) and hands them here.
 *
 * Terms:
 * - system: a connected group (calls taken as undirected) of at least two workflows;
 * - entry: a member no other member calls; column 0;
 * - column: call depth, the longest chain of calls from an entry, so every call points right;
 * - back edge: a call closing a cycle (found by depth-first search from the entries, successors
 *   in name order); it is left out of the layering, kept in `edges`, and its cycle reported.
 */

export interface MapMember {
  id: string;
  name: string;
  status: string;
  folder_id: string | null;
}

export interface MapEntry {
  id: string;
  name: string;
  active: boolean;
  folder_id: string | null;
}

export interface MapSystem {
  columns: MapEntry[][];
  edges: Array<[string, string]>;
  /** The folder most members are filed in (null: the root), ties broken by folder name then id. */
  folder: { id: string; name: string } | null;
  /** Members filed elsewhere than `folder`. */
  strays: string[];
  /** Each cycle of calls: its members, in column order. */
  cycles: string[][];
}

export interface WorkspaceMap {
  systems: MapSystem[];
  standalone: MapEntry[];
}

const byName = (a: MapMember, b: MapMember) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const entryOf = (m: MapMember): MapEntry => ({ id: m.id, name: m.name, active: m.status === 'active', folder_id: m.folder_id });

export function buildWorkspaceMap(
  members: MapMember[],
  calls: Array<{ caller_id: string; callee_id: string }>,
  folders: ReadonlyMap<string, string>,
  filter: { search?: string; status?: string } = {},
): WorkspaceMap {
  const kept = members.filter((m) => filter.status === undefined || m.status === filter.status).sort(byName);
  const byId = new Map(kept.map((m) => [m.id, m]));
  const out = new Map<string, string[]>(kept.map((m) => [m.id, []]));
  const into = new Map<string, string[]>(kept.map((m) => [m.id, []]));
  const edgeSet = new Set<string>();
  for (const { caller_id, callee_id } of calls) {
    if (!byId.has(caller_id) || !byId.has(callee_id)) continue;
    const key = `${caller_id} ${callee_id}`;
    if (edgeSet.has(key)) continue;
    edgeSet.add(key);
    out.get(caller_id)!.push(callee_id);
    into.get(callee_id)!.push(caller_id);
  }
  const order = (ids: string[]) => ids.sort((a, b) => byName(byId.get(a)!, byId.get(b)!));
  for (const list of out.values()) order(list);

  const component = new Map<string, number>();
  const groups: string[][] = [];
  for (const m of kept) {
    if (component.has(m.id)) continue;
    const group: string[] = [];
    const stack = [m.id];
    component.set(m.id, groups.length);
    while (stack.length > 0) {
      const id = stack.pop()!;
      group.push(id);
      for (const next of [...out.get(id)!, ...into.get(id)!]) {
        if (!component.has(next)) {
          component.set(next, groups.length);
          stack.push(next);
        }
      }
    }
    groups.push(order(group));
  }

  const search = filter.search?.toLowerCase();
  const matches = (ids: string[]) => search === undefined || search === '' || ids.some((id) => byId.get(id)!.name.toLowerCase().includes(search));
  const systems: MapSystem[] = [];
  const standalone: MapEntry[] = [];
  for (const group of groups) {
    if (!matches(group)) continue;
    if (group.length < 2) {
      standalone.push(entryOf(byId.get(group[0]!)!));
      continue;
    }
    systems.push(layOut(group, byId, out, into, folders));
  }
  systems.sort((a, b) => memberCount(b) - memberCount(a) || (a.columns[0]![0]!.name < b.columns[0]![0]!.name ? -1 : 1));
  return { systems, standalone };
}

function memberCount(system: MapSystem): number {
  return system.columns.reduce((n, column) => n + column.length, 0);
}

function layOut(group: string[], byId: Map<string, MapMember>, out: Map<string, string[]>, into: Map<string, string[]>, folders: ReadonlyMap<string, string>): MapSystem {
  // Depth-first from the entries (then from the first unvisited member, for a system that is all cycle), marking back edges.
  const state = new Map<string, 1 | 2>();
  const back = new Set<string>();
  const starts = [...group.filter((id) => into.get(id)!.length === 0), ...group];
  for (const start of starts) {
    if (state.has(start)) continue;
    const path = [start];
    const next = [0];
    state.set(start, 1);
    while (path.length > 0) {
      const top = path.length - 1;
      const id = path[top]!;
      const successor = out.get(id)![next[top]!];
      if (successor === undefined) {
        state.set(id, 2);
        path.pop();
        next.pop();
        continue;
      }
      next[top]! += 1;
      const seen = state.get(successor);
      if (seen === 1) back.add(`${id} ${successor}`);
      else if (seen === undefined) {
        state.set(successor, 1);
        path.push(successor);
        next.push(0);
      }
    }
  }
  // Longest path over the forward edges, in topological order (Kahn, name order among the ready).
  const depth = new Map<string, number>(group.map((id) => [id, 0]));
  const pending = new Map(group.map((id) => [id, into.get(id)!.filter((from) => !back.has(`${from} ${id}`)).length]));
  const ready = group.filter((id) => pending.get(id) === 0);
  while (ready.length > 0) {
    const id = ready.shift()!;
    for (const to of out.get(id)!) {
      if (back.has(`${id} ${to}`)) continue;
      depth.set(to, Math.max(depth.get(to)!, depth.get(id)! + 1));
      pending.set(to, pending.get(to)! - 1);
      if (pending.get(to) === 0) ready.push(to);
    }
  }
  const columns: MapEntry[][] = [];
  for (const id of group) (columns[depth.get(id)!] ??= []).push(entryOf(byId.get(id)!));
  const edges: Array<[string, string]> = [];
  for (const id of group) for (const to of out.get(id)!) edges.push([id, to]);
  const position = new Map(columns.flatMap((column, c) => column.map((entry, r) => [entry.id, c * 1_000_000 + r] as const)));
  const cycles = cyclesOf(group, out).map((cycle) => cycle.sort((a, b) => position.get(a)! - position.get(b)!));
  cycles.sort((a, b) => position.get(a[0]!)! - position.get(b[0]!)!);
  const { folder, strays } = folderOf(group, byId, folders);
  return { columns: columns.filter((column) => column !== undefined), edges, folder, strays, cycles };
}

/** Strongly connected components with a cycle (two or more members, or one calling itself); Tarjan's, iterative. */
function cyclesOf(group: string[], out: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;
  const members = new Set(group);
  for (const root of group) {
    if (index.has(root)) continue;
    const work: Array<{ id: string; next: number }> = [{ id: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const successors = out.get(frame.id)!.filter((s) => members.has(s));
      if (frame.next < successors.length) {
        const to = successors[frame.next++]!;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ id: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.id, Math.min(low.get(frame.id)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id)!, low.get(frame.id)!));
      if (low.get(frame.id) === index.get(frame.id)) {
        const scc: string[] = [];
        let id: string;
        do {
          id = stack.pop()!;
          onStack.delete(id);
          scc.push(id);
        } while (id !== frame.id);
        if (scc.length > 1 || out.get(frame.id)!.includes(frame.id)) found.push(scc);
      }
    }
  }
  return found;
}

function folderOf(group: string[], byId: Map<string, MapMember>, folders: ReadonlyMap<string, string>): { folder: MapSystem['folder']; strays: string[] } {
  const counts = new Map<string | null, number>();
  for (const id of group) {
    const folderId = byId.get(id)!.folder_id;
    counts.set(folderId, (counts.get(folderId) ?? 0) + 1);
  }
  const label = (id: string | null) => (id === null ? '' : (folders.get(id) ?? ''));
  const [best] = [...counts.entries()].sort((a, b) => b[1] - a[1] || (label(a[0]) < label(b[0]) ? -1 : label(a[0]) > label(b[0]) ? 1 : String(a[0]) < String(b[0]) ? -1 : 1));
  const folderId = best![0];
  return {
    folder: folderId === null ? null : { id: folderId, name: folders.get(folderId) ?? '' },
    strays: group.filter((id) => byId.get(id)!.folder_id !== folderId),
  };
}
