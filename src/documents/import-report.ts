/**
 * The import report (DESIGN.md "import report"): what an imported workflow still needs before it
 * can be activated. Every pointer is relative to the workflow's `graph` attribute
 * (`/nodes/3/config/url`).
 */
export const REQUIREMENT_KINDS = ['credentials', 'secrets', 'bindings', 'expressions', 'provider_keys'] as const;
export type RequirementKind = (typeof REQUIREMENT_KINDS)[number];

export interface Requirement {
  pointer: string;
  detail: string;
  [fact: string]: unknown;
}

export interface PlaceholderEntry {
  node_id: string;
  original: { name: string | null; type: string; version: number | string | null };
  reason: string;
  pointer: string;
}

/** Where each node of the source went: a step, a placeholder, an annotation, or into another step (AI sub-nodes). */
export interface SourceNodeEntry {
  name: string;
  type: string;
  became: 'step' | 'placeholder' | 'annotation' | 'sub_node';
  /** The graph node (or annotation) it became or was folded into. */
  id: string;
}

export class ImportReport {
  readonly placeholders: PlaceholderEntry[] = [];
  readonly requirements: Record<RequirementKind, Requirement[]> = {
    credentials: [],
    secrets: [],
    bindings: [],
    expressions: [],
    provider_keys: [],
  };
  readonly sourceNodes: SourceNodeEntry[] = [];

  require(kind: RequirementKind, requirement: Requirement): void {
    this.requirements[kind].push(requirement);
  }

  /** The `meta` of the import answer. */
  toMeta(): { placeholders: PlaceholderEntry[]; requirements: Record<RequirementKind, Requirement[]> } {
    return { placeholders: this.placeholders, requirements: this.requirements };
  }
}
