/**
 * Terms:
 * - node: one step of a workflow; `type` is a step definition's slug.
 * - port: a named connection point; an edge leaves a node's out port (`out` unless the step
 *   has others) and enters an in port (`in`). Triggers have no in port.
 * - edge: a directed link from (source, source_port) to (target, target_port).
 * - violation: one problem found while validating a graph, addressed by a JSON Pointer into
 *   the request document.
 */
export const RETRY_BACKOFFS = ['fixed', 'exponential'] as const;
export type RetryBackoff = (typeof RETRY_BACKOFFS)[number];

export const ON_ERROR_MODES = ['fail', 'continue'] as const;
export type OnErrorMode = (typeof ON_ERROR_MODES)[number];

export interface RetryPolicy {
  max_attempts: number;
  backoff_ms: number;
  backoff: RetryBackoff;
  max_backoff_ms?: number;
}

export interface GraphNode {
  id: string;
  type: string;
  name?: string;
  config: Record<string, unknown>;
  position: { x: number; y: number };
  disabled?: boolean;
  retry?: RetryPolicy;
  on_error?: OnErrorMode;
}

export interface GraphEdge {
  id: string;
  source: string;
  source_port: string;
  target: string;
  target_port: string;
}

/** Workflow-wide run settings, carried in the graph so activation freezes them with it. */
export interface GraphSettings {
  /** At most this many executions of the workflow run at once; more wait `pending`, in order. */
  concurrency_limit?: number | null;
  /** False: step rows keep status, timings and metrics but not input, output and logs. */
  save_step_payloads?: boolean;
}

/**
 * A note drawn on the canvas (an n8n sticky note, say): not a step, never run, kept by
 * `PUT /graph`, exported and imported with the graph.
 */
export interface GraphAnnotation {
  id: string;
  text: string;
  position: { x: number; y: number };
  name?: string;
  size?: { width: number; height: number };
  color?: string | number;
}

export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  settings?: GraphSettings;
  annotations?: GraphAnnotation[];
}

export interface GraphViolation {
  pointer: string;
  code: GraphViolationCode;
  detail: string;
}

/** The out port a node gains with `on_error: "continue"`; failures leave through it. */
export const ERROR_PORT = 'error';
export const DEFAULT_OUT_PORT = 'out';
export const DEFAULT_IN_PORT = 'in';

/** Every `code` a graph violation can carry. */
export const GRAPH_VIOLATION_CODES = [
  'invalid_graph',
  'graph_too_large',
  'invalid_node',
  'unknown_step_type',
  'duplicate_node_id',
  'invalid_config',
  'invalid_retry',
  'invalid_edge',
  'dangling_edge',
  'unknown_port',
  'duplicate_edge',
  'duplicate_edge_id',
  'invalid_settings',
  'invalid_loop',
  'invalid_annotation',
  'placeholder_node',
  'unbound_reference',
  'missing_secret',
] as const;
export type GraphViolationCode = (typeof GRAPH_VIOLATION_CODES)[number];
