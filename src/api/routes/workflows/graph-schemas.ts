const POSITION = { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } } };

const NODE = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    type: { type: 'string', description: 'a step-template slug' },
    name: { type: 'string' },
    config: { type: 'object', additionalProperties: true },
    position: POSITION,
    disabled: { type: 'boolean' },
    retry: {
      type: 'object',
      properties: {
        max_attempts: { type: 'integer' },
        backoff_ms: { type: 'integer' },
        backoff: { type: 'string', enum: ['fixed', 'exponential'] },
        max_backoff_ms: { type: 'integer' },
      },
    },
    on_error: { type: 'string', enum: ['fail', 'continue'] },
  },
};

const EDGE = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    source: { type: 'string' },
    source_port: { type: 'string' },
    target: { type: 'string' },
    target_port: { type: 'string' },
  },
};

export const GRAPH_SCHEMA = {
  type: 'object',
  properties: { nodes: { type: 'array', items: NODE }, edges: { type: 'array', items: EDGE } },
};

/**
 * Only the envelope is checked by the framework; the graph itself is validated against the step
 * catalog by the service, which answers 422 with a pointer per violation (node and edge shapes
 * are documented by the response schema).
 */
export const GRAPH_BODY_SCHEMA = {
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'object',
      properties: {
        graph: {
          type: 'object',
          description:
            '{nodes, edges, settings?}: nodes {id, type, name?, config, position, disabled?, retry?, on_error?}; edges {id?, source, source_port?, target, target_port?}; settings {concurrency_limit?, save_step_payloads?}',
        },
        layout: { description: 'false keeps the payload positions; default true runs auto-layout' },
      },
    },
  },
};

export const GRAPH_RESPONSE_SCHEMA = {
  description: 'plain JSON (application/json): the stored graph',
  type: 'object',
  properties: {
    workflow_id: { type: 'string', format: 'uuid' },
    graph: { type: 'object', additionalProperties: true, properties: GRAPH_SCHEMA.properties },
    layout: { type: 'boolean' },
    updated_at: { type: 'string', format: 'date-time' },
    webhook_tokens: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'bearer tokens minted by this save for webhook nodes, by node id: shown only here (rotate to get a new one)',
    },
  },
};

export const RUN_BODY_SCHEMA = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        draft: { type: 'boolean', description: 'run the live canvas instead of the active snapshot (also for inactive workflows)' },
        input: { description: 'any JSON value; it becomes the trigger payload body ({method: "RUN", headers, query, body})' },
      },
    },
  },
};

export const RUN_RESPONSE_SCHEMA = {
  description: 'plain JSON (application/json): the execution was recorded and started (or queued)',
  type: 'object',
  properties: { execution_id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: ['pending', 'running'] } },
};
