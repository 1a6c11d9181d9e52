import type { GraphNode } from '../../graph/graph-types.js';
import type { Cancellation } from '../../lib/cancellation.js';
import type { Clock } from '../../lib/clock.js';
import type { StepEffect, StepRunContext, StepSettings, StepStoreAccess } from '../../steps/step-runtime.js';
import { resolveConfig, type ExpressionScope } from '../expressions/expressions.js';
import { nextRetryDelay } from './retry-policy.js';
import { serializeStepError, WaitForApproval, type SerializedStepError } from '../step-errors.js';
import { runtimeFor } from './runtimes.js';
import { waitUntil } from '../../steps/wait/index.js';

export type AttemptOutcome =
  /** `effect`: a write the engine commits with the step's completion, whose result is the output (see StepEffect). */
  | {
      type: 'completed';
      output: unknown;
      ports: string[];
      logs?: string[];
      kind: string;
      provider?: string;
      memoryBytes?: number;
      reductions?: number;
      effect?: StepEffect;
    }
  /** `output` and `kind`: what the waiting row holds (an approval's links); a plain wait has none. */
  | { type: 'wait'; resumeAtMs: number; output?: unknown; kind?: string; logs?: string[] }
  | { type: 'call'; workflowId: string; input: unknown; wait: boolean }
  | { type: 'failed'; error: SerializedStepError; retryInMs: number | null; kind: string };

export interface AttemptInput {
  node: GraphNode;
  attempt: number;
  input: unknown;
  scope: ExpressionScope;
  cancel: Cancellation;
  clock: Clock;
  settings: StepSettings;
  stores: StepStoreAccess | undefined;
  execution: StepRunContext['execution'];
  /** True when a waiting `wait` node is being resumed: it completes, passing its input on. */
  resuming: boolean;
  journal?: StepRunContext['journal'];
  calls?: StepRunContext['calls'];
  agent?: StepRunContext['agent'];
  approvals?: StepRunContext['approvals'];
}

/**
 * Runs one attempt of one node: resolves its config's expressions, runs its runtime, and turns
 * the result or the error into an outcome, including whether and when to retry.
 */
export async function runAttempt(args: AttemptInput): Promise<AttemptOutcome> {
  const { node } = args;
  try {
    if (node.type === 'wait') {
      if (args.resuming) return { type: 'completed', output: args.input, ports: ['out'], kind: 'wait' };
      const config = await resolveConfig(node.config, args.scope, { nodeId: node.id });
      const resumeAtMs = waitUntil(config, args.clock.nowMs());
      if (resumeAtMs <= args.clock.nowMs()) return { type: 'completed', output: args.input, ports: ['out'], kind: 'wait' };
      return { type: 'wait', resumeAtMs };
    }
    if (node.type === 'call_workflow') {
      // The engine starts the child execution; the step waits for it or passes on its id.
      const config = await resolveConfig(node.config, args.scope, { nodeId: node.id });
      return {
        type: 'call',
        workflowId: String(config.workflow_id),
        input: config.input === undefined ? null : config.input,
        wait: config.wait !== false,
      };
    }
    const runtime = runtimeFor(node.type);
    const config = await resolveConfig(node.config, args.scope, { nodeId: node.id });
    const result = await runtime({
      nodeId: node.id,
      config,
      input: args.input,
      nodes: args.scope.nodes,
      trigger: args.scope.trigger,
      cancel: args.cancel,
      clock: args.clock,
      attempt: args.attempt,
      nodeRetryPolicy: node.retry !== undefined,
      execution: args.execution,
      settings: args.settings,
      stores: args.stores,
      journal: args.journal,
      calls: args.calls,
      agent: args.agent,
      approvals: args.approvals,
    });
    // One literal with every key (absent ones undefined), not conditional spreads: see StepOwner in step-rows.ts.
    return {
      type: 'completed',
      output: result.output === undefined ? null : result.output,
      ports: result.ports ?? ['out'],
      logs: result.logs,
      kind: result.metrics?.kind ?? node.type,
      provider: result.metrics?.provider || undefined,
      memoryBytes: result.metrics?.memory_bytes,
      reductions: result.metrics?.reductions,
      effect: result.effect,
    };
  } catch (error) {
    // An agent's tool waits for its approval: the attempt's row waits, as a wait step's does.
    if (error instanceof WaitForApproval) return { type: 'wait', resumeAtMs: error.resumeAtMs, kind: node.type, output: error.output };
    const serialized = serializeStepError(error);
    return { type: 'failed', error: serialized, retryInMs: nextRetryDelay(node.retry, args.attempt, serialized), kind: node.type };
  }
}
