import type { GraphPlan } from './graph-plan.js';

/**
 * Dataflow state of one execution, rebuilt from step rows on recovery. An edge is *taken* when
 * its source completed through the edge's port, *untaken* when the source completed through
 * another port or was skipped. A node runs when every incoming edge is resolved and at least
 * one was taken; when all are resolved and none was taken, it is skipped (and so are its edges).
 */
export type NodeState = 'pending' | 'running' | 'waiting' | 'completed' | 'skipped' | 'failed';

export interface DataflowState {
  nodes: Map<string, NodeState>;
  /** Output of each completed node. */
  outputs: Map<string, unknown>;
  /** Ports each completed node took. */
  ports: Map<string, string[]>;
  /** Order in which nodes completed (for the terminal output). */
  completedOrder: string[];
}

export function newDataflowState(plan: GraphPlan): DataflowState {
  return { nodes: new Map(plan.order.map((id) => [id, 'pending' as NodeState])), outputs: new Map(), ports: new Map(), completedOrder: [] };
}

function edgeResolution(state: DataflowState, source: string, port: string): 'taken' | 'untaken' | 'open' {
  const status = state.nodes.get(source);
  if (status === 'completed' || status === 'failed') return state.ports.get(source)?.includes(port) ? 'taken' : 'untaken';
  if (status === 'skipped') return 'untaken';
  return 'open';
}

/**
 * Advances the state: marks nodes skipped whose every incoming edge is untaken (repeatedly, so
 * skips propagate) and returns the nodes ready to run, in graph order. Roots are never returned
 * here: the run's start decides which roots fire.
 */
export function readyNodes(plan: GraphPlan, state: DataflowState): { ready: string[]; skipped: string[] } {
  const skipped: string[] = [];
  let changed = true;
  let ready: string[] = [];
  while (changed) {
    changed = false;
    ready = [];
    for (const id of plan.order) {
      if (state.nodes.get(id) !== 'pending') continue;
      const edges = plan.incoming.get(id)!;
      if (edges.length === 0) continue;
      let open = false;
      let taken = false;
      for (const edge of edges) {
        const resolution = edgeResolution(state, edge.source, edge.source_port);
        if (resolution === 'open') open = true;
        else if (resolution === 'taken') taken = true;
      }
      if (open) continue;
      if (taken) {
        ready.push(id);
      } else {
        state.nodes.set(id, 'skipped');
        skipped.push(id);
        changed = true;
      }
    }
  }
  return { ready, skipped };
}

/** A node's input: its single taken source's output, or an object keyed by source id. */
export function inputOf(plan: GraphPlan, state: DataflowState, nodeId: string): unknown {
  const taken = plan.incoming.get(nodeId)!.filter((edge) => edgeResolution(state, edge.source, edge.source_port) === 'taken');
  const sources = [...new Set(taken.map((edge) => edge.source))];
  if (sources.length === 1) return state.outputs.get(sources[0]!) ?? null;
  return Object.fromEntries(sources.map((source) => [source, state.outputs.get(source) ?? null]));
}

/**
 * The execution's output: the output of the last node to complete that has no outgoing taken
 * edge (the value a `last_step` webhook answers with).
 */
export function terminalOutput(plan: GraphPlan, state: DataflowState): unknown {
  for (let i = state.completedOrder.length - 1; i >= 0; i -= 1) {
    const id = state.completedOrder[i]!;
    const takesAnEdge = plan.outgoing.get(id)!.some((edge) => state.ports.get(id)?.includes(edge.source_port));
    if (!takesAnEdge) return state.outputs.get(id) ?? null;
  }
  return null;
}

/** No node can still run: nothing pending, running or waiting. */
export function isSettled(state: DataflowState): boolean {
  for (const status of state.nodes.values()) if (status === 'pending' || status === 'running' || status === 'waiting') return false;
  return true;
}
