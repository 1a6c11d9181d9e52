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
 *
 * Members are numbered once in name order (then id), and everything after works on those
 * numbers: ascending numbers are name order, so no comparison reads a name again. At 2,000
 * workflows and 2,500 calls the layout takes ~7 ms once warm on a loaded 2-core machine (it took
 * 18 ms comparing names and ids in every sort; bench/results/map.md has the whole request).
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
const ascending = (a: number, b: number) => a - b;

/** The call graph over member numbers: successors and predecessors, each list ascending. */
interface Numbered {
  members: MapMember[];
  entries: MapEntry[];
  out: number[][];
  into: number[][];
}

export function buildWorkspaceMap(
  all: MapMember[],
  calls: Array<{ caller_id: string; callee_id: string }>,
  folders: ReadonlyMap<string, string>,
  filter: { search?: string; status?: string } = {},
): WorkspaceMap {
  const members = all.filter((m) => filter.status === undefined || m.status === filter.status).sort(byName);
  const number = new Map(members.map((m, i) => [m.id, i]));
  const out: number[][] = members.map(() => []);
  const into: number[][] = members.map(() => []);
  const seen = new Set<number>();
  for (const { caller_id, callee_id } of calls) {
    const from = number.get(caller_id);
    const to = number.get(callee_id);
    if (from === undefined || to === undefined) continue;
    const key = from * members.length + to;
    if (seen.has(key)) continue;
    seen.add(key);
    out[from]!.push(to);
    into[to]!.push(from);
  }
  for (const list of out) list.sort(ascending);
  for (const list of into) list.sort(ascending);
  const graph: Numbered = {
    members,
    entries: members.map((m) => ({ id: m.id, name: m.name, active: m.status === 'active', folder_id: m.folder_id })),
    out,
    into,
  };

  const component = new Int32Array(members.length).fill(-1);
  const groups: number[][] = [];
  for (let start = 0; start < members.length; start++) {
    if (component[start] !== -1) continue;
    const group: number[] = [];
    const stack = [start];
    component[start] = groups.length;
    while (stack.length > 0) {
      const n = stack.pop()!;
      group.push(n);
      for (const next of [...out[n]!, ...into[n]!]) {
        if (component[next] !== -1) continue;
        component[next] = groups.length;
        stack.push(next);
      }
    }
    groups.push(group.sort(ascending));
  }

  const search = filter.search?.toLowerCase();
  const matches = (group: number[]) =>
    search === undefined || search === '' || group.some((n) => members[n]!.name.toLowerCase().includes(search));
  const systems: Array<{ size: number; first: number; system: MapSystem }> = [];
  const standalone: MapEntry[] = [];
  for (const group of groups) {
    if (!matches(group)) continue;
    if (group.length < 2) standalone.push(graph.entries[group[0]!]!);
    else systems.push({ size: group.length, first: 0, system: layOut(group, graph, folders) });
  }
  for (const s of systems) s.first = number.get(s.system.columns[0]![0]!.id)!;
  systems.sort((a, b) => b.size - a.size || a.first - b.first);
  return { systems: systems.map((s) => s.system), standalone };
}

function layOut(group: number[], graph: Numbered, folders: ReadonlyMap<string, string>): MapSystem {
  const { out, into, entries } = graph;
  // Depth-first from the entries (then from the first unvisited member, for a system that is all cycle), marking back edges.
  const state = new Map<number, 1 | 2>();
  const back = new Set<string>();
  const starts = [...group.filter((n) => into[n]!.length === 0), ...group];
  for (const start of starts) {
    if (state.has(start)) continue;
    const path = [start];
    const next = [0];
    state.set(start, 1);
    while (path.length > 0) {
      const top = path.length - 1;
      const n = path[top]!;
      const successor = out[n]![next[top]!];
      if (successor === undefined) {
        state.set(n, 2);
        path.pop();
        next.pop();
        continue;
      }
      next[top]! += 1;
      const s = state.get(successor);
      if (s === 1) back.add(`${n} ${successor}`);
      else if (s === undefined) {
        state.set(successor, 1);
        path.push(successor);
        next.push(0);
      }
    }
  }
  // Longest path over the forward edges, in topological order (Kahn's, lowest number first among the ready).
  const depth = new Map<number, number>(group.map((n) => [n, 0]));
  const pending = new Map(group.map((n) => [n, into[n]!.filter((from) => !back.has(`${from} ${n}`)).length]));
  const ready = group.filter((n) => pending.get(n) === 0);
  for (let head = 0; head < ready.length; head++) {
    const n = ready[head]!;
    for (const to of out[n]!) {
      if (back.has(`${n} ${to}`)) continue;
      depth.set(to, Math.max(depth.get(to)!, depth.get(n)! + 1));
      pending.set(to, pending.get(to)! - 1);
      if (pending.get(to) === 0) ready.push(to);
    }
  }
  const columns: number[][] = [];
  for (const n of group) (columns[depth.get(n)!] ??= []).push(n);
  const dense = columns.filter((column) => column !== undefined);
  const edges: Array<[string, string]> = [];
  for (const n of group) for (const to of out[n]!) edges.push([entries[n]!.id, entries[to]!.id]);
  const position = new Map(dense.flatMap((column, c) => column.map((n, r) => [n, c * 1_000_000 + r] as const)));
  const cycles = cyclesOf(group, out).map((cycle) => cycle.sort((a, b) => position.get(a)! - position.get(b)!));
  cycles.sort((a, b) => position.get(a[0]!)! - position.get(b[0]!)!);
  const { folder, strays } = folderOf(group, graph, folders);
  return {
    columns: dense.map((column) => column.map((n) => entries[n]!)),
    edges,
    folder,
    strays: strays.map((n) => entries[n]!.id),
    cycles: cycles.map((cycle) => cycle.map((n) => entries[n]!.id)),
  };
}

/** Strongly connected components with a cycle (two or more members, or one calling itself); Tarjan's, iterative. */
function cyclesOf(group: number[], out: number[][]): number[][] {
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const onStack = new Set<number>();
  const stack: number[] = [];
  const found: number[][] = [];
  let counter = 0;
  for (const root of group) {
    if (index.has(root)) continue;
    const work: Array<{ n: number; next: number }> = [{ n: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const successors = out[frame.n]!;
      if (frame.next < successors.length) {
        const to = successors[frame.next++]!;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ n: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.n, Math.min(low.get(frame.n)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.n, Math.min(low.get(parent.n)!, low.get(frame.n)!));
      if (low.get(frame.n) === index.get(frame.n)) {
        const scc: number[] = [];
        let n: number;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          scc.push(n);
        } while (n !== frame.n);
        if (scc.length > 1 || out[frame.n]!.includes(frame.n)) found.push(scc);
      }
    }
  }
  return found;
}

function folderOf(
  group: number[],
  graph: Numbered,
  folders: ReadonlyMap<string, string>,
): { folder: MapSystem['folder']; strays: number[] } {
  const counts = new Map<string | null, number>();
  for (const n of group) {
    const folderId = graph.members[n]!.folder_id;
    counts.set(folderId, (counts.get(folderId) ?? 0) + 1);
  }
  const label = (id: string | null) => (id === null ? '' : (folders.get(id) ?? ''));
  const [best] = [...counts.entries()].sort(
    (a, b) => b[1] - a[1] || (label(a[0]) < label(b[0]) ? -1 : label(a[0]) > label(b[0]) ? 1 : String(a[0]) < String(b[0]) ? -1 : 1),
  );
  const folderId = best![0];
  return {
    folder: folderId === null ? null : { id: folderId, name: folders.get(folderId) ?? '' },
    strays: group.filter((n) => graph.members[n]!.folder_id !== folderId),
  };
}
