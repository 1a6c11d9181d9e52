import { isPlainObject } from '../../lib/json.js';
import { findStepDefinition } from '../../steps/registry.js';
import { mergeStepConfig, validateStepConfig } from '../../steps/validate-step-config.js';
import { MAX_PLACEHOLDER_OUTPUTS, placeholderPort } from '../../steps/placeholder/index.js';
import type { GraphAnnotation } from '../../graph/graph-types.js';
import { ImportReport } from '../import-report.js';
import type { BindingRequest, ImportDraft } from '../import-draft.js';
import {
  isPlaceholderResult,
  NodeContext,
  nodeRoot,
  pathTarget,
  type MapResult,
  type MappedStep,
  type PlaceholderResult,
} from './map-context.js';
import type { N8nNode, N8nWorkflow } from './n8n-document.js';
import type { ExpressionContext } from './n8n-expressions.js';
import { n8nExportKey } from './map-execute-workflow.js';
import { mapperFor, STICKY_NOTE } from './node-mappers.js';
import { assignIds } from './node-ids.js';
import { inputExpressionFor, outputAdapter } from './output-adapters.js';
import { buildEdges } from './n8n-edges.js';
import { droppedConnectionRequirement } from './n8n-connections.js';

/**
 * An n8n workflow as a Switchyard draft (docs/import.md has the table). Every source node is
 * accounted for: a step, a placeholder, an annotation (sticky notes) or part of the agent step
 * its sub-node feeds; `report.sourceNodes` says which. Connections (keyed by node names or ids,
 * read as names) and output indexes become edges between ports; those naming no node are listed
 * under `bindings`.
 */
export function mapN8nWorkflow(workflow: N8nWorkflow): ImportDraft {
  const report = new ImportReport();
  const stickies = workflow.nodes.filter((node) => node.type === STICKY_NOTE);
  const steps = workflow.nodes.filter((node) => node.type !== STICKY_NOTE);
  const ids = assignIds(steps.map((node) => ({ name: node.name, id: node.id })));
  const byName = new Map(workflow.nodes.map((node) => [node.name, node]));

  // Sub-nodes (AI models, memories, tools) feed their parent through ai_* connections.
  const subNodes = new Map<string, Map<string, N8nNode[]>>();
  const parentOf = new Map<string, string>();
  const mainSources = new Map<string, Array<{ source: string; output: number; input: number }>>();
  for (const [source, byType] of Object.entries(workflow.connections)) {
    for (const [type, outputs] of Object.entries(byType)) {
      outputs.forEach((targets, output) => {
        for (const target of targets) {
          if (type === 'main') {
            mainSources.set(target.node, [...(mainSources.get(target.node) ?? []), { source, output, input: target.index }]);
            continue;
          }
          const group = subNodes.get(target.node) ?? new Map<string, N8nNode[]>();
          const node = byName.get(source)!;
          if (!(group.get(type) ?? []).includes(node)) group.set(type, [...(group.get(type) ?? []), node]);
          subNodes.set(target.node, group);
          if (!parentOf.has(source)) parentOf.set(source, target.node);
        }
      });
    }
  }

  const shaped = shapeSource(mainSources, byName);
  const expressionsFor = (node: N8nNode): ExpressionContext => {
    const host = parentOf.has(node.name) && !mainSources.has(node.name) ? byName.get(parentOf.get(node.name)!)! : node;
    const sources = (mainSources.get(host.name) ?? []).map((s) => shaped(byName.get(s.source)));
    const first = sources[0];
    const sameKind = sources.every((s) => s?.type === first?.type);
    return {
      input: pathTarget('input', sameKind ? outputAdapter(first) : (accessors) => accessors),
      node: (name) => {
        const id = ids.get(name);
        if (id === undefined || parentOf.has(name)) return undefined;
        return pathTarget(nodeRoot(id), outputAdapter(shaped(byName.get(name))));
      },
    };
  };
  const contextFor = (node: N8nNode): NodeContext =>
    new NodeContext(node, workflow, expressionsFor(node), ids, subNodes.get(node.name) ?? new Map(), contextFor);

  // Parents first: an agent folds its sub-nodes in before they could become placeholders.
  const results = new Map<string, MapResult>();
  const absorbedInto = new Map<string, string>();
  const order = [...steps.filter((n) => !parentOf.has(n.name)), ...steps.filter((n) => parentOf.has(n.name))];
  for (const node of order) {
    if (absorbedInto.has(node.name)) continue;
    const ctx = contextFor(node);
    const mapper = mapperFor(node.type);
    const sources = mainSources.get(node.name) ?? [];
    const inputs: string[][] = [];
    for (const s of sources) (inputs[s.input] ??= []).push(ids.get(s.source)!);
    let result: MapResult = mapper
      ? mapper(ctx, { inputExpression: inputExpressionFor(shaped(byName.get(sources[0]?.source ?? ''))), inputs })
      : {
          placeholder: parentOf.has(node.name)
            ? `the ${shortType(node)} sub-node has no place in a Switchyard step`
            : `n8n node type "${node.type}" has no Switchyard step`,
        };
    if (!isPlaceholderResult(result)) result = checked(result);
    results.set(node.name, result);
    if (!isPlaceholderResult(result)) for (const name of result.absorbed ?? []) absorbedInto.set(name, ids.get(node.name)!);
  }

  const nodes: Array<Record<string, unknown>> = [];
  const indexOf = new Map<string, number>();
  const bindings: BindingRequest[] = [];
  for (const node of steps) {
    const id = ids.get(node.name)!;
    if (absorbedInto.has(node.name)) {
      report.sourceNodes.push({ name: node.name, type: node.type, became: 'sub_node', id: absorbedInto.get(node.name)! });
      continue;
    }
    const result = results.get(node.name)!;
    const index = nodes.length;
    const at = `/nodes/${index}`;
    indexOf.set(node.name, index);
    const graphNode: Record<string, unknown> = {
      id,
      type: 'placeholder',
      name: node.name,
      config: {},
      position: node.position ?? { x: 0, y: 0 },
    };
    const notes = isPlaceholderResult(result) ? (result.notes ?? []) : (result.notes ?? []);
    if (isPlaceholderResult(result)) {
      graphNode.config = placeholderConfig(node, result, outputsOf(workflow, node.name));
      report.placeholders.push({
        node_id: id,
        original: { name: node.name, type: node.type, version: node.typeVersion },
        reason: result.placeholder,
        pointer: at,
      });
      report.sourceNodes.push({ name: node.name, type: node.type, became: 'placeholder', id });
      for (const [type, credential] of Object.entries(node.credentials)) {
        const name =
          typeof credential === 'string' && credential !== ''
            ? credential
            : isPlainObject(credential) && typeof credential.name === 'string'
              ? credential.name
              : null;
        report.require('credentials', {
          pointer: at,
          detail: `the placeholder used n8n credential "${name ?? type}" (${type}); credentials are never imported`,
          credential_type: type,
          credential_name: name,
        });
      }
    } else {
      graphNode.type = result.type;
      graphNode.config = result.config;
      report.sourceNodes.push({ name: node.name, type: node.type, became: 'step', id });
      for (const binding of result.bindings ?? [])
        bindings.push({
          pointer: `${at}/config${binding.path}`,
          resource: binding.resource,
          by: binding.by,
          detail: binding.detail,
          ...(binding.facts ? { facts: binding.facts } : {}),
        });
      Object.assign(graphNode, nodeOptions(node));
    }
    for (const note of notes)
      report.require(note.kind, { pointer: `${at}/config${note.path}`, detail: `${node.name}: ${note.detail}`, ...(note.facts ?? {}) });
    nodes.push(graphNode);
  }

  for (const dropped of workflow.droppedConnections) report.require('bindings', droppedConnectionRequirement(dropped, indexOf));
  const edges = buildEdges(workflow, nodes, indexOf, results, ids);
  const annotationIds = assignIds(
    stickies.map((node) => ({ name: node.name, id: node.id })),
    new Set(ids.values()),
  );
  const annotations = stickies.map((node) => stickyAnnotation(node, annotationIds.get(node.name)!));
  for (const node of stickies)
    report.sourceNodes.push({ name: node.name, type: node.type, became: 'annotation', id: annotationIds.get(node.name)! });

  const graph: Record<string, unknown> = { nodes, edges };
  if (annotations.length > 0) graph.annotations = annotations;
  return {
    source: { format: 'n8n', shape: workflow.shape, n8n_id: workflow.id },
    name: workflow.name,
    description: workflow.description,
    attributes: {},
    exportKey: workflow.id === null ? null : n8nExportKey(workflow.id),
    graph,
    graphPointer: workflow.pointer,
    layout: workflow.nodes.every((node) => node.position === null),
    bindings,
    report,
  };
}

/** n8n nodes whose items leave as they came, mapped to steps whose output is their input unchanged. */
const PASS_THROUGH = new Set(['n8n-nodes-base.if', 'n8n-nodes-base.switch', 'n8n-nodes-base.noOp', 'n8n-nodes-base.wait']);

/**
 * The node whose output gives a node's items their shape: itself, or for IF, Switch, No
 * Operation and Wait, what feeds them (followed upwards). So `$json.id` after "HTTP Request ->
 * IF" reads the response body (`input.body.id`), as it does right after the request. Where the
 * feeding nodes differ in kind the pass-through node itself is the answer (no adaptation).
 */
function shapeSource(
  mainSources: ReadonlyMap<string, Array<{ source: string }>>,
  byName: ReadonlyMap<string, N8nNode>,
): (node: N8nNode | undefined) => N8nNode | undefined {
  return (node) => {
    const seen = new Set<string>();
    let current = node;
    while (current !== undefined && PASS_THROUGH.has(current.type) && !seen.has(current.name)) {
      seen.add(current.name);
      const feeding = (mainSources.get(current.name) ?? []).map((s) => byName.get(s.source));
      if (feeding.length === 0 || feeding.some((n) => n?.type !== feeding[0]?.type)) return current;
      current = feeding[0];
    }
    return current;
  };
}

function shortType(node: N8nNode): string {
  return node.type.split('.').pop() ?? node.type;
}

/** A mapped config that the step's schema refuses (an odd source value) becomes a placeholder that shows both. */
function checked(step: MappedStep): MapResult {
  const definition = findStepDefinition(step.type);
  if (definition === undefined)
    return { placeholder: `this release has no ${step.type} step`, suggested: { type: step.type, config: step.config } };
  const merged = mergeStepConfig(definition, step.config);
  const issues = validateStepConfig(definition, merged);
  const problems = issues.length === 0 ? (definition.checkConfig?.(merged) ?? []) : issues;
  if (problems.length === 0) return step;
  return {
    placeholder: `the mapped ${step.type} config is not valid: ${problems.map((p) => p.detail).join(' ')}`,
    suggested: { type: step.type, config: step.config },
    notes: step.notes,
  };
}

function placeholderConfig(node: N8nNode, result: PlaceholderResult, outputs: number): Record<string, unknown> {
  const credentials = Object.fromEntries(
    Object.entries(node.credentials).map(([type, value]) => [
      type,
      typeof value === 'string' ? value : isPlainObject(value) && typeof value.name === 'string' ? value.name : null,
    ]),
  );
  const original: Record<string, unknown> = { type: node.type, version: node.typeVersion, name: node.name, parameters: node.parameters };
  if (Object.keys(credentials).length > 0) original.credentials = credentials;
  if (node.notes !== null) original.notes = node.notes;
  const config: Record<string, unknown> = {
    original,
    reason: result.placeholder,
    outputs: Math.min(Math.max(outputs, 1), MAX_PLACEHOLDER_OUTPUTS),
  };
  if (result.suggested) config.suggested = result.suggested;
  return config;
}

/** How many main outputs a node's connections use. */
function outputsOf(workflow: N8nWorkflow, name: string): number {
  return workflow.connections[name]?.main?.length ?? 1;
}

/** n8n node settings Switchyard has: disabled, retry on fail, and continuing on error. */
function nodeOptions(node: N8nNode): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (node.disabled) options.disabled = true;
  if (node.onError === 'continueErrorOutput' || node.onError === 'continueRegularOutput' || node.continueOnFail)
    options.on_error = 'continue';
  if (node.retryOnFail) {
    options.retry = {
      max_attempts: Math.min(Math.max(Math.round(node.maxTries ?? 3), 1), 25),
      backoff_ms: Math.min(Math.max(Math.round(node.waitBetweenTries ?? 1000), 0), 86_400_000),
      backoff: 'fixed',
    };
  }
  return options;
}

function stickyAnnotation(node: N8nNode, id: string): GraphAnnotation {
  const p = node.parameters;
  const annotation: GraphAnnotation = {
    id,
    name: node.name,
    text: typeof p.content === 'string' ? p.content : '',
    position: node.position ?? { x: 0, y: 0 },
  };
  annotation.size = { width: typeof p.width === 'number' ? p.width : 240, height: typeof p.height === 'number' ? p.height : 160 };
  if (typeof p.color === 'number' || typeof p.color === 'string') annotation.color = p.color;
  return annotation;
}

export { placeholderPort };
