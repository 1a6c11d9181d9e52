import type { GraphPlan } from './graph-plan.js';

/**
 * Dataflow state of one frame (the whole run, or one iteration of a loop body). An edge is
 * *taken* when its source completed through the edge's port, *untaken* when the source
 * completed through another port or was skipped. A node runs when every incoming edge is
 * resolved and at least one was taken; when all are resolved and none was taken, it is
 * skipped (and so are its edges).
 *
 * The state is kept incrementally: each node counts its unresolved incoming edges, and a
 * resolved node touches only its outgoing edges. Re-scanning every node before each step
 * (the first version) made step k of a linear run cost O(k): step 1,000 of a 1,000-step run
 * took ~3x step 1's orchestration time. Now every step costs the same.
 */
export type NodeState = 'pending' | 'running' | 'waiting' | 'completed' | 'skipped' | 'failed';

export class Dataflow {
  readonly nodes = new Map<string, NodeState>();
  /** Output of each resolved node. */
  readonly outputs = new Map<string, unknown>();
  /** Ports each resolved node took. */
  readonly ports = new Map<string, string[]>();
  /** Order in which nodes completed (for the terminal output). */
  readonly completedOrder: string[] = [];
  /**
   * What expressions see as `nodes`: the outputs so far by node id, grown in place as nodes
   * complete (building it per step would cost O(nodes) per step).
   */
  readonly view: Record<string, unknown>;
  private readonly open = new Map<string, number>();
  private readonly taken = new Set<string>();
  /** Ready nodes, lowest graph rank first. */
  private readonly ready: string[] = [];
  private newlySkipped: string[] = [];
  private unsettled: number;

  constructor(
    private readonly plan: GraphPlan,
    inherited: Record<string, unknown> = {},
  ) {
    for (const id of plan.order) {
      this.nodes.set(id, 'pending');
      this.open.set(id, plan.incoming.get(id)!.length);
    }
    this.unsettled = plan.order.length;
    this.view = { ...inherited };
  }

  /** A node resolved through `ports`: completed, or failed with its error routed on. */
  resolve(nodeId: string, status: 'completed' | 'failed', output: unknown, ports: string[]): void {
    if (this.isUnsettled(nodeId)) this.unsettled -= 1;
    // A replayed row resolves a node the replay had just made ready.
    this.removeReady(nodeId);
    this.nodes.set(nodeId, status);
    this.outputs.set(nodeId, output);
    this.ports.set(nodeId, ports);
    this.completedOrder.push(nodeId);
    this.view[nodeId] = output;
    this.resolveEdges(nodeId, ports);
  }

  /** Records a node skipped (a root that did not fire, or a replayed skip row). */
  skip(nodeId: string): void {
    if (this.nodes.get(nodeId) === 'skipped') return;
    if (this.isUnsettled(nodeId)) this.unsettled -= 1;
    this.removeReady(nodeId);
    this.nodes.set(nodeId, 'skipped');
    this.resolveEdges(nodeId, []);
  }

  markRunning(nodeId: string): void {
    this.nodes.set(nodeId, 'running');
  }

  markWaiting(nodeId: string): void {
    this.removeReady(nodeId);
    this.nodes.set(nodeId, 'waiting');
  }

  /** A node to run again at once (a retry without delay): ready again, in rank order. */
  requeue(nodeId: string): void {
    this.nodes.set(nodeId, 'pending');
    this.insertReady(nodeId);
  }

  /** Marks a root ready (a fired root that is not a trigger, or one left in flight). */
  readyRoot(nodeId: string): void {
    if (this.nodes.get(nodeId) === 'pending' && this.open.get(nodeId) === 0) this.insertReady(nodeId);
  }

  /** The ready node of lowest rank, removed from the ready set. */
  takeReady(): string | undefined {
    return this.ready.shift();
  }

  hasReady(): boolean {
    return this.ready.length > 0;
  }

  /** Nodes skipped since the last call (their rows are still to be written). */
  drainSkipped(): string[] {
    const skipped = this.newlySkipped;
    this.newlySkipped = [];
    return skipped;
  }

  /** Drops these nodes from the skipped-since list (a replay derives skips whose rows exist). */
  forgetSkipped(recorded: Set<string>): void {
    this.newlySkipped = this.newlySkipped.filter((id) => !recorded.has(id));
  }

  /** No node can still run: nothing pending, running or waiting. */
  isSettled(): boolean {
    return this.unsettled === 0;
  }

  /** A node's input: its single taken source's output, an object keyed by source id, or `rootInput` for a root. */
  inputOf(nodeId: string, rootInput: unknown): unknown {
    const incoming = this.plan.incoming.get(nodeId)!;
    if (incoming.length === 0) return rootInput;
    const sources: string[] = [];
    for (const edge of incoming) {
      if (this.ports.get(edge.source)?.includes(edge.source_port) && !sources.includes(edge.source)) sources.push(edge.source);
    }
    if (sources.length === 1) return this.outputs.get(sources[0]!) ?? null;
    return Object.fromEntries(sources.map((source) => [source, this.outputs.get(source) ?? null]));
  }

  /**
   * The frame's result: the output of the last node to complete that has no outgoing taken
   * edge (the execution's output, the value a `last_step` webhook answers with, an iteration's
   * result).
   */
  terminalOutput(): unknown {
    for (let i = this.completedOrder.length - 1; i >= 0; i -= 1) {
      const id = this.completedOrder[i]!;
      const ports = this.ports.get(id) ?? [];
      if (!this.plan.outgoing.get(id)!.some((edge) => ports.includes(edge.source_port))) return this.outputs.get(id) ?? null;
    }
    return null;
  }

  private isUnsettled(nodeId: string): boolean {
    const status = this.nodes.get(nodeId);
    return status === 'pending' || status === 'running' || status === 'waiting';
  }

  private resolveEdges(nodeId: string, ports: string[]): void {
    for (const edge of this.plan.outgoing.get(nodeId)!) {
      const target = edge.target;
      if (ports.includes(edge.source_port)) this.taken.add(target);
      const left = this.open.get(target)! - 1;
      this.open.set(target, left);
      if (left !== 0 || this.nodes.get(target) !== 'pending') continue;
      if (this.taken.has(target)) {
        this.insertReady(target);
      } else {
        this.newlySkipped.push(target);
        this.skip(target);
      }
    }
  }

  private insertReady(nodeId: string): void {
    if (this.ready.includes(nodeId)) return;
    const rank = this.plan.rank.get(nodeId)!;
    let at = this.ready.length;
    while (at > 0 && this.plan.rank.get(this.ready[at - 1]!)! > rank) at -= 1;
    this.ready.splice(at, 0, nodeId);
  }

  private removeReady(nodeId: string): void {
    const at = this.ready.indexOf(nodeId);
    if (at !== -1) this.ready.splice(at, 1);
  }
}
