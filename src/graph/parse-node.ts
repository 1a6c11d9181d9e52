import { isPlainObject } from '../lib/json.js';
import type { StepDefinition } from '../steps/define-step.js';
import { findStepDefinition } from '../steps/registry.js';
import { mergeStepConfig, validateStepConfig } from '../steps/validate-step-config.js';
import { ON_ERROR_MODES, type GraphNode, type GraphViolation, type OnErrorMode } from './graph-types.js';
import { escapePointerToken } from '../lib/json-pointer.js';
import { parseRetry } from './parse-retry.js';

export const MAX_NODE_ID_LENGTH = 100;
const NODE_ID_PATTERN = /^[A-Za-z0-9_-]+$/;
const NODE_FIELDS = ['id', 'type', 'name', 'config', 'position', 'disabled', 'retry', 'on_error'];

export interface ParsedNode {
  /** The normalized node, or null when any of its own checks failed. */
  node: GraphNode | null;
  /** The id as sent when it is a string, even an invalid one, so edges to it are not reported as dangling too. */
  id: string | null;
  definition: StepDefinition | undefined;
  onError: OnErrorMode | undefined;
  /** The config merged over the step's defaults, even when invalid (switch ports are read from it); null when unknown. */
  config: Record<string, unknown> | null;
  violations: GraphViolation[];
}

/** Checks one node's shape, retry policy and config; `pointer` addresses the node. */
export function parseNode(raw: unknown, pointer: string): ParsedNode {
  const violations: GraphViolation[] = [];
  const invalid = (field: string | null, detail: string) =>
    violations.push({ pointer: field === null ? pointer : `${pointer}/${field}`, code: 'invalid_node', detail });

  if (!isPlainObject(raw)) {
    invalid(null, 'A node must be an object.');
    return { node: null, id: null, definition: undefined, onError: undefined, config: null, violations };
  }

  const id = typeof raw.id === 'string' ? raw.id : null;
  if (raw.id === undefined) {
    invalid('id', 'Node id is required.');
  } else if (id === null || id.length === 0 || id.length > MAX_NODE_ID_LENGTH || !NODE_ID_PATTERN.test(id)) {
    invalid('id', `Node id must be 1 to ${MAX_NODE_ID_LENGTH} letters, digits, "_" or "-".`);
  }

  let definition: StepDefinition | undefined;
  if (typeof raw.type !== 'string') {
    invalid('type', raw.type === undefined ? 'Node type is required.' : 'Node type must be a string.');
  } else {
    definition = findStepDefinition(raw.type);
    if (definition === undefined) {
      violations.push({ pointer: `${pointer}/type`, code: 'unknown_step_type', detail: `There is no step type "${raw.type}".` });
    }
  }

  if (raw.name !== undefined && typeof raw.name !== 'string') invalid('name', 'Node name must be a string.');

  const position: unknown = raw.position ?? { x: 0, y: 0 };
  let x = 0;
  let y = 0;
  if (!isPlainObject(position)) {
    invalid('position', 'Node position must be an object {x, y}.');
  } else {
    for (const axis of ['x', 'y'] as const) {
      if (typeof position[axis] !== 'number' || !Number.isFinite(position[axis])) {
        invalid(`position/${axis}`, `Node position.${axis} must be a number.`);
      }
    }
    x = position.x as number;
    y = position.y as number;
    for (const key of Object.keys(position)) {
      if (key !== 'x' && key !== 'y') invalid(`position/${escapePointerToken(key)}`, `Node position.${key} is not a known field.`);
    }
  }

  if (raw.disabled !== undefined && typeof raw.disabled !== 'boolean') invalid('disabled', 'Node disabled must be true or false.');

  let onError: OnErrorMode | undefined;
  if (raw.on_error !== undefined) {
    if (ON_ERROR_MODES.includes(raw.on_error as OnErrorMode)) onError = raw.on_error as OnErrorMode;
    else invalid('on_error', 'Node on_error must be "fail" or "continue".');
  }

  const retry = raw.retry === undefined ? null : parseRetry(raw.retry, `${pointer}/retry`);
  if (retry !== null) violations.push(...retry.violations);

  let config: Record<string, unknown> | null = null;
  if (raw.config !== undefined && !isPlainObject(raw.config)) {
    invalid('config', 'Node config must be an object.');
  } else if (definition !== undefined) {
    config = mergeStepConfig(definition, (raw.config as Record<string, unknown> | undefined) ?? {});
    const schemaIssues = validateStepConfig(definition, config);
    const checkIssues = schemaIssues.length === 0 ? (definition.checkConfig?.(config) ?? []) : [];
    for (const issue of [...schemaIssues, ...checkIssues]) {
      violations.push({ pointer: `${pointer}/config${issue.pointer}`, code: 'invalid_config', detail: issue.detail });
    }
  }

  for (const key of Object.keys(raw)) {
    if (!NODE_FIELDS.includes(key)) invalid(escapePointerToken(key), `Node property "${key}" is not allowed.`);
  }

  if (violations.length > 0 || id === null || definition === undefined || config === null) {
    return { node: null, id, definition, onError, config, violations };
  }
  const node: GraphNode = { id, type: definition.slug, config, position: { x, y } };
  if (raw.name !== undefined) node.name = raw.name as string;
  if (raw.disabled !== undefined) node.disabled = raw.disabled as boolean;
  if (retry?.retry) node.retry = retry.retry;
  if (onError !== undefined) node.on_error = onError;
  return { node, id, definition, onError, config, violations };
}
