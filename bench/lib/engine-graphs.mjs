// The graphs the engine benchmarks run, in the shape PUT /workflows/:id/graph takes.

const TRIGGER = 'trigger';
const position = (column) => ({ x: column * 240, y: 0 });
const edge = (source, target) => ({ source, target });

/** A webhook trigger anyone may call (the benchmarks start runs through POST /run anyway). */
export const webhookNode = (id = TRIGGER) => ({ id, type: 'webhook', config: { verification: { method: 'none' } }, position: position(0) });

/** A step that does nothing: a `set` with no values outputs `{}`. */
export const noopNode = (id, column) => ({ id, type: 'set', config: { values: {} }, position: position(column) });

/** Node id of the k-th no-op step (1-based) of a chain: step_0001, step_0002, ... */
export const chainStepId = (k) => `step_${String(k).padStart(4, '0')}`;

/**
 * webhook -> `steps` sequential no-op steps. `settings` (e.g. `{save_step_payloads: false}`)
 * goes beside nodes and edges when given.
 */
export function chainGraph(steps, settings) {
  const nodes = [webhookNode()];
  const edges = [];
  for (let k = 1; k <= steps; k += 1) {
    nodes.push(noopNode(chainStepId(k), k));
    edges.push(edge(nodes[k - 1].id, nodes[k].id));
  }
  return settings ? { nodes, edges, settings } : { nodes, edges };
}

/** The call_workflow pair: child webhook -> set; parent webhook -> call_workflow(child) -> set. */
export const CALL_NODE = 'call';
export const calledChildGraph = () => chainGraph(1);
export function callingParentGraph(childId) {
  return {
    nodes: [
      webhookNode(),
      {
        id: CALL_NODE,
        type: 'call_workflow',
        config: { workflow_id: childId, input: '{{ trigger.body }}', wait: true },
        position: position(1),
      },
      noopNode('after', 2),
    ],
    edges: [edge(TRIGGER, CALL_NODE), edge(CALL_NODE, 'after')],
  };
}
