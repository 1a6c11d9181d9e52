// The graphs the webhook benchmarks run, in the shape PUT /workflows/:id/graph takes. Every
// webhook uses bearer verification (the default, written out), so verifying the token is part
// of every delivery measured.

export const TRIGGER = 'trigger';
const position = (column) => ({ x: column * 240, y: 0 });
const edge = (source, target) => ({ source, target });
const webhook = (responseMode) => ({
  id: TRIGGER,
  type: 'webhook',
  config: { response_mode: responseMode, verification: { method: 'bearer' } },
  position: position(0),
});
/** A code step (QuickJS on the worker-thread pool) that passes on the delivered body. */
const shape = () => ({ id: 'shape', type: 'code', config: { code: 'return { seen: input.body };' }, position: position(1) });

/** webhook (`immediate`) -> code: answered 202 once the execution row is committed. */
export function immediateGraph() {
  return { nodes: [webhook('immediate'), shape()], edges: [edge(TRIGGER, 'shape')] };
}

/** webhook (`respond_step`) -> code -> respond_to_webhook, answering the code step's output. */
export function respondStepGraph() {
  return {
    nodes: [
      webhook('respond_step'),
      shape(),
      { id: 'respond', type: 'respond_to_webhook', config: { status: 200, body: '{{ nodes.shape }}' }, position: position(2) },
    ],
    edges: [edge(TRIGGER, 'shape'), edge('shape', 'respond')],
  };
}

/** The delivery every benchmark sends, and what each graph answers to it. */
export const DELIVERY_BODY = JSON.stringify({ order: 42, items: ['a', 'b'] });
export const RESPOND_STEP_ANSWER = JSON.stringify({ seen: JSON.parse(DELIVERY_BODY) });
