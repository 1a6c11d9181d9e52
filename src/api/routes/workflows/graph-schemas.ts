import { DOCUMENT_FORM } from '../../jsonapi/resource-schemas.js';
import { ANNOTATION_LIMITS } from '../../../graph/parse-annotations.js';
import { RETRY_LIMITS } from '../../../graph/parse-retry.js';
import { MAX_CONCURRENCY_LIMIT } from '../../../graph/parse-settings.js';
import { GRAPH_LIMITS } from '../../../graph/validate-graph.js';
import { ON_ERROR_MODES, RETRY_BACKOFFS } from '../../../graph/graph-types.js';
import { dataBodyForm } from '../body-schemas.js';

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

const finite = { type: 'number' } as const;
const point = (a: string, b: string) => ({ type: 'object', required: [a, b], properties: { [a]: finite, [b]: finite } });
const NODE_ID = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' } as const;
const PORT = { type: 'string', minLength: 1 } as const;
const NODE_REF = { type: 'string', minLength: 1, description: 'a node id of this graph' } as const;

/** A node as validateGraph reads it (graph/parse-node.ts, parse-retry.ts). */
const NODE_INPUT = {
  type: 'object',
  required: ['id', 'type'],
  properties: {
    id: { ...NODE_ID, description: 'unique in the graph' },
    type: { type: 'string', description: 'a step-template slug (GET /step-templates)' },
    name: { type: 'string' },
    config: {
      type: 'object',
      additionalProperties: true,
      description: "merged over the step's defaults, then checked against its config schema (GET /step-templates)",
    },
    position: { ...point('x', 'y'), type: ['object', 'null'], description: 'absent or null: {x: 0, y: 0}' },
    disabled: { type: 'boolean' },
    retry: {
      type: 'object',
      required: ['max_attempts', 'backoff_ms', 'backoff'],
      properties: {
        max_attempts: { type: 'integer', minimum: 1, maximum: RETRY_LIMITS.maxAttempts },
        backoff_ms: { type: 'integer', minimum: 0, maximum: RETRY_LIMITS.maxBackoffMs },
        backoff: { type: 'string', enum: [...RETRY_BACKOFFS] },
        max_backoff_ms: { type: 'integer', minimum: 0, maximum: RETRY_LIMITS.maxBackoffMs, description: 'at least backoff_ms' },
      },
    },
    on_error: { type: 'string', enum: [...ON_ERROR_MODES] },
  },
};

/** An edge as validateGraph reads it: ports default to out and in, the id to `source:port->target:port`. */
const EDGE_INPUT = {
  type: 'object',
  required: ['source', 'target'],
  properties: { id: PORT, source: NODE_REF, source_port: PORT, target: NODE_REF, target_port: PORT },
};

const ANNOTATION_INPUT = {
  type: 'object',
  required: ['id', 'text', 'position'],
  properties: {
    id: { ...NODE_ID, description: 'unique among the annotations' },
    text: { type: 'string', maxLength: ANNOTATION_LIMITS.maxTextLength },
    position: point('x', 'y'),
    name: { type: 'string', maxLength: 200 },
    size: point('width', 'height'),
    color: { type: ['string', 'number'] },
  },
};

/** The graph as `PUT /workflows/:id/graph` takes it (graph/validate-graph.ts). */
const GRAPH_INPUT = {
  type: 'object',
  required: ['nodes'],
  description: 'the canvas: checked against the step catalog, each violation a 422 with its pointer',
  properties: {
    nodes: { type: 'array', maxItems: GRAPH_LIMITS.maxNodes, items: NODE_INPUT },
    edges: { type: ['array', 'null'], maxItems: GRAPH_LIMITS.maxEdges, items: EDGE_INPUT, description: 'absent or null: none' },
    settings: {
      type: 'object',
      properties: {
        concurrency_limit: { type: ['integer', 'null'], minimum: 1, maximum: MAX_CONCURRENCY_LIMIT, description: 'null: no limit' },
        save_step_payloads: { type: 'boolean' },
      },
    },
    annotations: {
      type: 'array',
      maxItems: ANNOTATION_LIMITS.maxAnnotations,
      items: ANNOTATION_INPUT,
      description: 'canvas notes, never run',
    },
  },
};

/**
 * Only the envelope is checked by the framework; the graph itself is validated against the step
 * catalog by the service, which answers 422 with a pointer per violation. The document shows
 * what the service takes (DOCUMENT_FORM).
 */
export const GRAPH_BODY_SCHEMA = {
  type: 'object',
  required: ['data'],
  [DOCUMENT_FORM]: dataBodyForm(
    {
      graph: GRAPH_INPUT,
      layout: { type: 'boolean', description: 'false keeps the payload positions; default true runs auto-layout' },
    },
    ['graph'],
  ),
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
  required: ['workflow_id', 'graph', 'layout', 'updated_at'],
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

const RUN_MEMBERS = {
  draft: { type: 'boolean', description: 'run the live canvas instead of the active snapshot (also for inactive workflows)' },
  input: { description: 'any JSON value; it becomes the trigger payload body ({method: "RUN", headers, query, body})' },
};

/** The framework checks the member types; the service refuses other members (422 with a pointer). */
export const RUN_BODY_SCHEMA = {
  type: 'object',
  [DOCUMENT_FORM]: dataBodyForm(RUN_MEMBERS, [], false),
  properties: { data: { type: 'object', properties: RUN_MEMBERS } },
};

export const RUN_RESPONSE_SCHEMA = {
  description: 'plain JSON (application/json): the execution was recorded and started (or queued)',
  type: 'object',
  required: ['execution_id', 'status'],
  properties: { execution_id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: ['pending', 'running'] } },
};
