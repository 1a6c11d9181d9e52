import { MAX_PLACEHOLDER_OUTPUTS, placeholderPort } from '../../steps/placeholder/index.js';
import { isPlaceholderResult, type MapResult } from './map-context.js';
import type { N8nWorkflow } from './n8n-document.js';

interface Edge {
  source: string;
  source_port: string;
  target: string;
  target_port: string;
}

/**
 * n8n main connections (by node name, as read whether keyed by name or id, and output index) as
 * edges between ports. An error output
 * (after the regular ones, with "continue (using error output)") leaves through `error`; with
 * "continue (regular output)" n8n sent failures down output 0, so `error` also feeds output 0's
 * targets. Connections back into a loop from its own body close an iteration in n8n; a loop
 * step's body ends by itself, so they are dropped.
 */
export function buildEdges(
  workflow: N8nWorkflow,
  nodes: Array<Record<string, unknown>>,
  indexOf: Map<string, number>,
  results: Map<string, MapResult>,
  ids: Map<string, string>,
): Edge[] {
  const edges: Edge[] = [];
  const seen = new Set<string>();
  const add = (edge: Edge) => {
    const key = JSON.stringify([edge.source, edge.source_port, edge.target, edge.target_port]);
    if (seen.has(key)) return;
    seen.add(key);
    edges.push(edge);
  };
  const byName = new Map(workflow.nodes.map((node) => [node.name, node]));
  for (const [sourceName, byType] of Object.entries(workflow.connections)) {
    if (!indexOf.has(sourceName)) continue;
    const result = results.get(sourceName)!;
    const node = byName.get(sourceName)!;
    (byType.main ?? []).forEach((targets, output) => {
      for (const target of targets) {
        if (!indexOf.has(target.node)) continue;
        for (const port of portsOf(result, node.onError, node.continueOnFail, output)) {
          add({ source: ids.get(sourceName)!, source_port: port, target: ids.get(target.node)!, target_port: 'in' });
        }
      }
    });
  }
  return dropLoopBackEdges(edges, nodes);
}

function portsOf(result: MapResult, onError: string | null, continueOnFail: boolean, output: number): string[] {
  if (isPlaceholderResult(result)) return output < MAX_PLACEHOLDER_OUTPUTS ? [placeholderPort(output)] : [];
  const regular = result.outputs ?? 1;
  if (output < regular) {
    const ports = result.outputPorts?.(output) ?? (output === 0 ? ['out'] : []);
    return output === 0 && (onError === 'continueRegularOutput' || (continueOnFail && onError === null)) ? [...ports, 'error'] : ports;
  }
  return output === regular && onError === 'continueErrorOutput' ? ['error'] : [];
}

function dropLoopBackEdges(edges: Edge[], nodes: Array<Record<string, unknown>>): Edge[] {
  const loops = nodes.filter((node) => node.type === 'loop').map((node) => node.id as string);
  if (loops.length === 0) return edges;
  const dropped = new Set<Edge>();
  for (const loop of loops) {
    const body = new Set<string>();
    const queue = edges.filter((e) => e.source === loop && e.source_port === 'body').map((e) => e.target);
    while (queue.length > 0) {
      const id = queue.pop()!;
      if (id === loop || body.has(id)) continue;
      body.add(id);
      for (const e of edges) if (e.source === id) queue.push(e.target);
    }
    for (const e of edges) if (e.target === loop && body.has(e.source)) dropped.add(e);
  }
  return edges.filter((e) => !dropped.has(e));
}
