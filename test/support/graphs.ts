/** A small valid canvas: webhook -> code -> respond_to_webhook. */
export function sampleGraph() {
  return {
    nodes: [
      { id: 'hook', type: 'webhook', config: { response_mode: 'respond_step' }, position: { x: 0, y: 0 } },
      { id: 'shape', type: 'code', config: { code: 'return { seen: input.body };' }, position: { x: 10, y: 0 } },
      { id: 'reply', type: 'respond_to_webhook', config: { status: 200, body: '{{ nodes.shape }}' }, position: { x: 20, y: 0 } },
    ],
    edges: [
      { source: 'hook', target: 'shape' },
      { source: 'shape', target: 'reply' },
    ],
  };
}
