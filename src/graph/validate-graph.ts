import { isPlainObject } from '../lib/json.js';
import type { StepDefinition } from '../steps/define-step.js';
import {
  DEFAULT_IN_PORT,
  DEFAULT_OUT_PORT,
  ERROR_PORT,
  type Graph,
  type GraphEdge,
  type GraphNode,
  type GraphViolation,
  type OnErrorMode,
} from './graph-types.js';
import { escapePointerToken } from '../lib/json-pointer.js';
import { parseNode } from './parse-node.js';
import { parseSettings } from './parse-settings.js';
import { parseAnnotations } from './parse-annotations.js';

export { findCycle } from './find-cycle.js';

/**
 * Bounds the work one `PUT /graph` can cause (ajv per node, layout); far above what a person
 * builds on a canvas.
 */
export const GRAPH_LIMITS = Object.freeze({ maxNodes: 2000, maxEdges: 5000 });

const GRAPH_FIELDS = ['nodes', 'edges', 'settings', 'annotations'];
const EDGE_FIELDS = ['id', 'source', 'source_port', 'target', 'target_port'];

interface NodeRef {
  index: number;
  definition: StepDefinition | undefined;
  onError: OnErrorMode | undefined;
  config: Record<string, unknown> | null;
}

export type ValidateGraphResult = { ok: true; graph: Graph } | { ok: false; violations: GraphViolation[] };

/**
 * Checks a graph as sent by a client and returns it normalized: defaults filled in (ports,
 * edge ids, positions, config merged over the step's defaults). Cycles are allowed here
 * because a canvas may be saved mid-edit; activation rejects them with `findCycle`.
 * Violations come nodes first, then edges, each in index order.
 */
export function validateGraph(input: unknown, pointerBase = '/data/graph'): ValidateGraphResult {
  const violation = (pointer: string, code: GraphViolation['code'], detail: string): GraphViolation => ({
    pointer: `${pointerBase}${pointer}`,
    code,
    detail,
  });

  if (!isPlainObject(input)) {
    return { ok: false, violations: [violation('', 'invalid_graph', 'The graph must be an object {nodes, edges}.')] };
  }
  const violations: GraphViolation[] = [];
  for (const key of Object.keys(input)) {
    if (!GRAPH_FIELDS.includes(key)) {
      violations.push(violation(`/${escapePointerToken(key)}`, 'invalid_graph', `Graph property "${key}" is not allowed.`));
    }
  }
  const rawNodes = input.nodes;
  const rawEdges = input.edges ?? [];
  if (!Array.isArray(rawNodes)) {
    violations.push(violation('/nodes', 'invalid_graph', 'nodes must be an array.'));
  } else if (rawNodes.length > GRAPH_LIMITS.maxNodes) {
    const detail = `A graph may have at most ${GRAPH_LIMITS.maxNodes} nodes; this one has ${rawNodes.length}.`;
    violations.push(violation('/nodes', 'graph_too_large', detail));
  }
  if (!Array.isArray(rawEdges)) {
    violations.push(violation('/edges', 'invalid_graph', 'edges must be an array.'));
  } else if (rawEdges.length > GRAPH_LIMITS.maxEdges) {
    const detail = `A graph may have at most ${GRAPH_LIMITS.maxEdges} edges; this one has ${rawEdges.length}.`;
    violations.push(violation('/edges', 'graph_too_large', detail));
  }
  // Without both arrays within limits nothing further can be checked (or is worth checking).
  if (violations.length > 0 || !Array.isArray(rawNodes) || !Array.isArray(rawEdges)) return { ok: false, violations };

  const nodes: GraphNode[] = [];
  const refs = new Map<string, NodeRef>();
  rawNodes.forEach((raw, index) => {
    const parsed = parseNode(raw, `${pointerBase}/nodes/${index}`);
    violations.push(...parsed.violations);
    if (parsed.id !== null) {
      const first = refs.get(parsed.id);
      if (first !== undefined) {
        const detail = `Node id "${parsed.id}" is already used by ${pointerBase}/nodes/${first.index}.`;
        violations.push(violation(`/nodes/${index}/id`, 'duplicate_node_id', detail));
      } else {
        refs.set(parsed.id, { index, definition: parsed.definition, onError: parsed.onError, config: parsed.config });
      }
    }
    if (parsed.node !== null) nodes.push(parsed.node);
  });

  const edges: GraphEdge[] = [];
  const edgeKeys = new Map<string, number>();
  const edgeIds = new Map<string, number>();
  rawEdges.forEach((raw, index) => {
    const at = `/edges/${index}`;
    const { edge, problems } = parseEdgeShape(raw);
    for (const p of problems) violations.push(violation(`${at}${p.field}`, 'invalid_edge', p.detail));
    if (edge === null) return;
    const before = violations.length;
    const source = refs.get(edge.source);
    const target = refs.get(edge.target);
    if (source === undefined) violations.push(violation(`${at}/source`, 'dangling_edge', `There is no node "${edge.source}".`));
    if (target === undefined) violations.push(violation(`${at}/target`, 'dangling_edge', `There is no node "${edge.target}".`));
    const sourcePortProblem = source && describeMissingOutPort(edge.source, source, edge.source_port);
    if (sourcePortProblem) violations.push(violation(`${at}/source_port`, 'unknown_port', sourcePortProblem));
    const targetPortProblem = target && describeMissingInPort(edge.target, target, edge.target_port);
    if (targetPortProblem) violations.push(violation(`${at}/target_port`, 'unknown_port', targetPortProblem));

    const key = JSON.stringify([edge.source, edge.source_port, edge.target, edge.target_port]);
    const sameEdge = edgeKeys.get(key);
    const sameId = edgeIds.get(edge.id);
    if (sameEdge !== undefined) {
      violations.push(violation(at, 'duplicate_edge', `This edge repeats ${pointerBase}/edges/${sameEdge}.`));
    } else if (sameId !== undefined) {
      violations.push(
        violation(`${at}/id`, 'duplicate_edge_id', `Edge id "${edge.id}" is already used by ${pointerBase}/edges/${sameId}.`),
      );
    }
    if (sameEdge === undefined) edgeKeys.set(key, index);
    if (sameId === undefined) edgeIds.set(edge.id, index);
    if (violations.length === before) edges.push(edge);
  });

  const settings = parseSettings(input.settings, `${pointerBase}/settings`);
  violations.push(...settings.violations);
  const annotations = parseAnnotations(input.annotations, `${pointerBase}/annotations`);
  violations.push(...annotations.violations);
  if (violations.length > 0) return { ok: false, violations };
  const graph: Graph = { nodes, edges };
  if (settings.value !== undefined) graph.settings = settings.value;
  if (annotations.value !== undefined) graph.annotations = annotations.value;
  return { ok: true, graph };
}

type EdgeProblem = { field: string; detail: string };

/** The edge with its defaults filled in, or null and what is wrong with its shape. */
function parseEdgeShape(raw: unknown): { edge: GraphEdge | null; problems: EdgeProblem[] } {
  if (!isPlainObject(raw)) return { edge: null, problems: [{ field: '', detail: 'An edge must be an object.' }] };
  const problems: EdgeProblem[] = [];
  for (const field of ['source', 'target'] as const) {
    if (typeof raw[field] !== 'string' || raw[field] === '') {
      problems.push({ field: `/${field}`, detail: `Edge ${field} must be a node id.` });
    }
  }
  for (const field of ['id', 'source_port', 'target_port'] as const) {
    if (raw[field] !== undefined && (typeof raw[field] !== 'string' || raw[field] === '')) {
      problems.push({ field: `/${field}`, detail: `Edge ${field} must be a non-empty string.` });
    }
  }
  for (const key of Object.keys(raw)) {
    if (!EDGE_FIELDS.includes(key)) {
      problems.push({ field: `/${escapePointerToken(key)}`, detail: `Edge property "${key}" is not allowed.` });
    }
  }
  if (problems.length > 0) return { edge: null, problems };
  const source = raw.source as string;
  const target = raw.target as string;
  const sourcePort = (raw.source_port as string | undefined) ?? DEFAULT_OUT_PORT;
  const targetPort = (raw.target_port as string | undefined) ?? DEFAULT_IN_PORT;
  const edge: GraphEdge = {
    id: (raw.id as string | undefined) ?? `${source}:${sourcePort}->${target}:${targetPort}`,
    source,
    source_port: sourcePort,
    target,
    target_port: targetPort,
  };
  return { edge, problems };
}

/**
 * Out ports of a node: its step's static ones (or those its config names, for a switch), plus
 * `error` when failures continue.
 */
export function outPortsOf(
  definition: StepDefinition,
  onError: OnErrorMode | undefined,
  config: Record<string, unknown> | null = null,
): string[] {
  const ports = definition.outPorts !== undefined && config !== null ? definition.outPorts(config) : [...definition.ports.out];
  return onError === 'continue' ? [...ports, ERROR_PORT] : ports;
}

function describeMissingOutPort(nodeId: string, ref: NodeRef, port: string): string | null {
  // An unknown step type is reported on the node; its ports cannot be known.
  if (ref.definition === undefined) return null;
  const ports = outPortsOf(ref.definition, ref.onError, ref.config);
  if (ports.includes(port)) return null;
  const subject = `Node "${nodeId}" (${ref.definition.slug}) has no out port "${port}"`;
  if (port === ERROR_PORT) return `${subject}; the error port exists only with on_error "continue".`;
  return `${subject}; its out ports are ${ports.map((p) => `"${p}"`).join(', ')}.`;
}

function describeMissingInPort(nodeId: string, ref: NodeRef, port: string): string | null {
  if (ref.definition === undefined) return null;
  const ports = ref.definition.ports.in;
  if (ports.includes(port)) return null;
  if (ports.length === 0) return `Node "${nodeId}" (${ref.definition.slug}) is a trigger and has no in port.`;
  return `Node "${nodeId}" (${ref.definition.slug}) has no in port "${port}"; its in ports are ${ports.map((p) => `"${p}"`).join(', ')}.`;
}
