import type { RequirementKind } from '../import-report.js';
import type { N8nNode, N8nWorkflow } from './n8n-document.js';
import { translateParameter, type ExpressionContext, type PathTarget } from './n8n-expressions.js';

/** A requirement found while mapping one node; `path` is relative to the node's config. */
export interface NodeNote {
  kind: RequirementKind;
  path: string;
  detail: string;
  facts?: Record<string, unknown>;
}

/** A reference the importing workspace must resolve; `path` is relative to the node's config. */
export interface NodeBinding {
  path: string;
  resource: 'workflow' | 'store' | 'memory';
  /** How to find it: a workflow by export key (or this workflow itself), a store by slug; null: cannot be bound. */
  by: { export_key: string } | { self: true } | { slug: string } | null;
  detail: string;
  facts?: Record<string, unknown>;
}

export interface MappedStep {
  type: string;
  config: Record<string, unknown>;
  /** How many regular outputs the n8n node has (an error output comes after them). */
  outputs?: number;
  /** n8n main output index -> Switchyard out ports (a Switch fallback may feed two). Default: `out`. */
  outputPorts?: (index: number) => string[];
  notes?: NodeNote[];
  bindings?: NodeBinding[];
  /** Names of AI sub-nodes folded into this step's config. */
  absorbed?: string[];
}

export interface PlaceholderResult {
  placeholder: string;
  /** The step this node would become in a release that has it. */
  suggested?: { type: string; config: Record<string, unknown> };
  notes?: NodeNote[];
}

export type MapResult = MappedStep | PlaceholderResult;

export function isPlaceholderResult(result: MapResult): result is PlaceholderResult {
  return 'placeholder' in result;
}

/** What a mapper sees of the workflow around the node it maps. */
export class NodeContext {
  readonly notes: NodeNote[] = [];

  constructor(
    readonly node: N8nNode,
    readonly workflow: N8nWorkflow,
    readonly expressions: ExpressionContext,
    /** n8n names -> Switchyard node ids. */
    readonly ids: ReadonlyMap<string, string>,
    /** Sub-nodes attached to this node, by connection type (`ai_languageModel`, `ai_tool`, …). */
    readonly subNodes: ReadonlyMap<string, N8nNode[]>,
    /** Builds the expression context for a sub-node (whose `$json` is its parent's input). */
    readonly contextFor: (node: N8nNode) => NodeContext,
  ) {}

  param(name: string, fallback?: unknown): unknown {
    const value = this.node.parameters[name];
    return value === undefined ? fallback : value;
  }

  /**
   * A parameter value translated for Switchyard, deep: strings through the expression
   * translator, arrays and objects member by member. What cannot be translated stays as text
   * and is noted as an `expressions` requirement at `path`.
   */
  translate(value: unknown, path: string): unknown {
    if (typeof value === 'string') {
      const translated = translateParameter(value, this.expressions);
      if (translated.ok) return translated.value;
      this.note(
        'expressions',
        path,
        `n8n expression ${translated.reason}; it was kept as text: rewrite it as a {{ … }} JSONata expression`,
        { original: value },
      );
      return translated.text;
    }
    if (Array.isArray(value)) return value.map((item, i) => this.translate(item, `${path}/${i}`));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [
          key,
          this.translate(item, `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`),
        ]),
      );
    }
    return value;
  }

  note(kind: RequirementKind, path: string, detail: string, facts?: Record<string, unknown>): void {
    this.notes.push({ kind, path, detail, ...(facts ? { facts } : {}) });
  }

  /** A `credentials` requirement per n8n credential the node used (by type and name; never a secret). */
  noteCredentials(path: string, what: string): void {
    for (const [type, value] of Object.entries(this.node.credentials)) {
      const name =
        typeof value === 'string' && value !== ''
          ? value
          : value !== null && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string'
            ? (value as { name: string }).name
            : null;
      this.note('credentials', path, `n8n credential "${name ?? type}" (${type}) was not imported: ${what}`, {
        credential_type: type,
        credential_name: name,
      });
    }
  }
}

/** `nodes.<id>` in JSONata, quoting an id JSONata cannot read bare (ids may hold "-"). */
export function nodeRoot(id: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(id) && !['and', 'or', 'in', 'true', 'false', 'null', 'function'].includes(id)
    ? `nodes.${id}`
    : `nodes.\`${id}\``;
}

/** A path target reading a step's output as n8n read the node's item. */
export function pathTarget(root: string, adapt: PathTarget['adapt'] = (accessors) => accessors): PathTarget {
  return { root, adapt };
}
