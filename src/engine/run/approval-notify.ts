import type { GraphNode } from '../../graph/graph-types.js';
import { RunCancel } from '../../lib/cancellation.js';
import { isPlainObject } from '../../lib/json.js';
import type { StepRunContext } from '../../steps/step-runtime.js';
import { resolveConfig, type ExpressionScope } from '../expressions/expressions.js';
import { runtimeFor } from './runtimes.js';
import type { RunHost } from './run-host.js';

/** What an approval's `notify` expressions see as `approval`. */
export interface ApprovalNotice {
  approve_url: string | null;
  reject_url: string | null;
  expires_at: string;
  message: string;
}

/**
 * Tells people an approval step waits (its config's `notify`): `http` is sent as an http step
 * sends its config, `slack` is posted as chat_reply posts (the workspace's installed bot; its
 * `installation_id`, else the only installation). Their expressions see the run's scope and
 * `approval` (the links, `expires_at`, `message`). A notification never fails the step: each
 * one's result or failure is a line of the step's logs, and the step waits either way (the
 * links are in its output for anyone who reads the record). Sent before the waiting record is
 * committed, so a link followed in that instant is refused as unknown (404); a crash before the
 * commit notifies again on the next attempt, with new links.
 */
export async function sendApprovalNotices(
  run: RunHost,
  node: GraphNode,
  scope: ExpressionScope,
  input: unknown,
  approval: ApprovalNotice,
): Promise<string[]> {
  const notify = node.config.notify;
  if (!isPlainObject(notify)) return [];
  const logs: string[] = [];
  const withApproval: ExpressionScope = Object.assign({}, scope, { approval });
  const targets: ['http' | 'slack', string][] = [
    ['http', 'http'],
    ['slack', 'chat_reply'],
  ];
  for (const [channel, stepType] of targets) {
    const raw = notify[channel];
    if (!isPlainObject(raw)) continue;
    try {
      const resolved = await resolveConfig({ notify: { [channel]: raw } }, withApproval, { nodeId: node.id });
      const config = (resolved.notify as Record<string, unknown>)[channel] as Record<string, unknown>;
      const result = await runtimeFor(stepType)(context(run, node, config, scope, input));
      logs.push(`notify ${channel}: ${describe(channel, result.output)}`);
    } catch (error) {
      logs.push(`notify ${channel} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return logs;
}

function context(run: RunHost, node: GraphNode, config: Record<string, unknown>, scope: ExpressionScope, input: unknown): StepRunContext {
  const { clock, settings } = run.deps;
  return {
    nodeId: node.id,
    config,
    input,
    nodes: scope.nodes,
    // chat_reply reads a Slack trigger's team: a notification names its installation or takes the only one.
    trigger: null,
    cancel: new RunCancel(),
    clock,
    attempt: 1,
    execution: { id: run.execution.id, workflowId: run.execution.workflow_id, workspaceId: run.execution.workspace_id },
    settings,
  };
}

function describe(channel: 'http' | 'slack', output: unknown): string {
  const answer = isPlainObject(output) ? output : {};
  return channel === 'http' ? `answered ${String(answer.status)}` : `posted to ${String(answer.channel)} (ts ${String(answer.ts)})`;
}
