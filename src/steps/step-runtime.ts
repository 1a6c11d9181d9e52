import type { Cancellation } from '../lib/cancellation.js';
import type { Clock } from '../lib/clock.js';
import type { ChatApi } from './chat-reply/chat-api.js';

/**
 * What a step's runtime sees: its resolved config and input, nothing of the engine or the
 * database (steps get a narrow context; the engine never hands them a service locator).
 */
export interface StepRunContext {
  nodeId: string;
  /** The node's config with every `{{ … }}` expression already evaluated. Read-only: parts without expressions are the plan's own (frozen) objects. */
  config: Record<string, unknown>;
  /** The output of the node feeding this one; with several incoming edges, an object keyed by source node id. */
  input: unknown;
  /** Outputs of the nodes completed so far, by node id. */
  nodes: Record<string, unknown>;
  /** The trigger payload `{method, headers, query, body}`. */
  trigger: unknown;
  /**
   * Aborted when the execution is cancelled or the engine stops. `cancel.signal` is an
   * AbortSignal for libraries that take one, made on first read (see lib/cancellation.ts).
   */
  cancel: Cancellation;
  clock: Clock;
  /** 1 for the first attempt. */
  attempt: number;
  execution: { id: string; workflowId: string; workspaceId: string };
  settings: StepSettings;
}

/** Process-wide settings some runtimes need (from Config). */
export interface StepSettings {
  /** Hosts/CIDRs the http step may reach despite the private-address guard (SWITCHYARD_HTTP_ALLOW). */
  httpAllow: readonly string[];
  /** Posting as a workspace's installed chat bot (chat_reply); absent: the step fails as not available. */
  chat?: ChatApi;
}

/** Measurements a runtime reports for the step row. */
export interface StepMetrics {
  memory_bytes?: number;
  reductions?: number;
  provider?: string;
  kind?: string;
}

/**
 * A runtime's result. `output` goes to the next nodes (through `ports`, default the step's
 * first out port); `logs` stay on the step record. Failures are thrown (see engine/step-errors).
 */
export interface StepResult {
  output: unknown;
  /** The out ports taken (if, switch: one; default: ['out']). */
  ports?: string[];
  logs?: string[];
  metrics?: StepMetrics;
}

export type StepRuntime = (context: StepRunContext) => Promise<StepResult>;
