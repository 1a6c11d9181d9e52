/**
 * A step definition declares one step type: what the catalog (`GET /step-templates`) shows,
 * which ports a node of that type has, and the JSON Schema its `config` must satisfy. It holds
 * no runtime; the engine pairs each slug with its executor separately.
 */
import type { ConfigIssue } from './describe-config-errors.js';
import { deepFreeze } from '../lib/json.js';

export const STEP_CATEGORIES = ['start', 'understand', 'fetch', 'transform', 'decide', 'check', 'act'] as const;
export type StepCategory = (typeof STEP_CATEGORIES)[number];

export interface StepPorts {
  in: string[];
  out: string[];
}

export interface StepDefinition {
  /** Identifier used as a node's `type`; lower snake_case. */
  slug: string;
  name: string;
  /** One line for the catalog. */
  description: string;
  /** Markdown: what the step does, its config fields, its output. */
  docs: string;
  categories: StepCategory[];
  icon: string;
  /** `#RRGGBB`. */
  iconColor: string;
  /** A trigger starts executions and has no input port. */
  trigger: boolean;
  /** Static ports; an `error` out port is added per node when it has `on_error: "continue"`. */
  ports: StepPorts;
  /** JSON Schema (2020-12, as compiled by ajv 8) for the node's `config`. */
  configSchema: Record<string, unknown>;
  /** Merged under a node's config (top-level keys) before validation. */
  defaultConfig: Record<string, unknown>;
  /** JSON Schema of the step's output, or null when it is not known statically. */
  outputSchema: Record<string, unknown> | null;
  sortOrder: number;
  canvasVisible: boolean;
  /**
   * An attempt reaches outside the engine (a request, a child execution, a store write): the
   * results before it are committed first, so a crash never repeats what it did on the strength
   * of results that were lost. Steps without effects are pure functions of their inputs (code
   * runs in a sandbox with no I/O), so running one again after a crash changes nothing.
   */
  effects?: boolean;
  /** Out ports that depend on the config (a switch has one per case); they replace `ports.out`. */
  outPorts?: (config: Record<string, unknown>) => string[];
  /** Config rules JSON Schema cannot state well; run once the schema has passed. */
  checkConfig?: (config: Record<string, unknown>) => ConfigIssue[];
}

const SLUG_PATTERN = /^[a-z][a-z0-9_]*$/;

/**
 * Checks and deep-freezes a definition. Freezing matters because definitions are shared by
 * every request: a caller mutating `defaultConfig` would otherwise change it for everyone.
 */
export function defineStep(def: StepDefinition): StepDefinition {
  if (!SLUG_PATTERN.test(def.slug)) {
    throw new Error(`Step slug "${def.slug}" must match ${String(SLUG_PATTERN)}.`);
  }
  return deepFreeze(def);
}
