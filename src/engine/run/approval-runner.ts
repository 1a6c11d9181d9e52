import type { GraphNode } from '../../graph/graph-types.js';
import { formatMicros } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { approvalPort, approvalTimeoutAction, approvalTimeoutMs } from '../../steps/approval/index.js';
import { findDecision, insertDecision, listOpenDecisions, type ApprovalDecision } from '../approval-store.js';
import { updateExecution, updateStep } from '../execution-store.js';
import type { StepApprovals } from '../../steps/step-runtime.js';
import { resolveConfig } from '../expressions/expressions.js';
import { NonRetriableError, serializeStepError } from '../step-errors.js';
import { sendApprovalNotices } from './approval-notify.js';
import type { FrameState, WaitingNode } from './restore-state.js';
import type { RunHost } from './run-host.js';
import type { Outcome } from './run-types.js';

/**
 * One attempt of an approval step. The first waits: its row goes `waiting` until the time-out
 * (`resume_at`), its output already holding the message and the signed links, so a person can
 * be sent them. A decision (engine/approval-store.ts `recordDecision`) makes that row due now;
 * resumed, the step completes with the decision and leaves by `approved` or `rejected`. Resumed
 * with no decision, the time-out has come: `on_timeout` decides (as `timeout`), inserted like
 * any decision, so a person deciding in the same instant and the time-out cannot both win (the
 * loser's insert does nothing and the winner's decision is read back). Failures are not retried:
 * a retry's waiting row would be taken for the approval's own.
 */
export async function runApproval(
  run: RunHost,
  frame: FrameState,
  node: GraphNode,
  input: unknown,
  resumed: WaitingNode | undefined,
): Promise<Outcome> {
  try {
    if (resumed?.stepId) return await decided(run, node, resumed.stepId);
    const { clock, settings } = run.deps;
    const scope = run.scope(frame, input);
    // `notify` is resolved when it is sent, with `approval` in its scope (approval-notify.ts).
    const { notify: _notify, ...rest } = node.config;
    const config = await resolveConfig(rest, scope, { nodeId: node.id });
    const resumeAtMs = clock.nowMs() + approvalTimeoutMs(config);
    const expiresAt = formatMicros(resumeAtMs * 1000);
    const stepId = newId();
    const links = settings.approvalLinks?.({ executionId: run.execution.id, stepId, expiresAt }) ?? { approve_url: null, reject_url: null };
    const message = typeof config.message === 'string' ? config.message : String(config.message ?? '');
    const output = { approve_url: links.approve_url, reject_url: links.reject_url, expires_at: expiresAt };
    const logs = await sendApprovalNotices(run, node, scope, input, Object.assign({ message }, output));
    return { type: 'wait', resumeAtMs, rowId: stepId, kind: 'approval', output, ...(logs.length > 0 ? { logs } : {}) };
  } catch (error) {
    return {
      type: 'failed',
      error: Object.assign(serializeStepError(error), { retryable: false, retry_after_ms: null }),
      retryInMs: null,
      kind: 'approval',
    };
  }
}

/** The step resumed: its decision, or the time-out's. */
async function decided(run: RunHost, node: GraphNode, stepId: string): Promise<Outcome> {
  const { db, clock } = run.deps;
  let decision = await findDecision(db, stepId);
  if (!decision) {
    const action = approvalTimeoutAction(node.config);
    const timeout: ApprovalDecision = {
      decision: action === 'fail' ? 'timed_out' : action,
      comment: null,
      input: null,
      decidedAt: clock.now(),
      decidedBy: 'timeout',
    };
    const owner = { stepId, workspaceId: run.execution.workspace_id, executionId: run.execution.id, nodeId: node.id };
    decision = (await insertDecision(db, owner, timeout)) ? timeout : await findDecision(db, stepId);
  }
  if (!decision) throw new Error(`the decision on approval step ${stepId} was neither inserted nor found`);
  if (decision.decision === 'timed_out') {
    throw new NonRetriableError(`no decision came before the approval's time-out (on_timeout: fail)`, {
      code: 'approval_timed_out',
      details: { decided_at: decision.decidedAt },
    });
  }
  // The waiting record's logs (its notifications) stay on the decided one.
  const waited = await db.selectFrom('execution_steps').select('logs').where('id', '=', stepId).executeTakeFirst();
  const logs = waited?.logs ? (JSON.parse(waited.logs) as string[]) : undefined;
  return {
    type: 'completed',
    output: {
      decision: decision.decision,
      comment: decision.comment,
      input: decision.input,
      decided_at: decision.decidedAt,
      decided_by: decision.decidedBy,
    },
    ports: [approvalPort(decision.decision)],
    kind: 'approval',
    logs,
  };
}

/**
 * After a run committed its wait: whether a decision it waits for landed while the run held
 * the execution, where the decision could not reach it. An agent's tool call is decided between
 * its journal row's commit and the attempt's parking (the decision found no waiting row to make
 * due); in a cluster any decision made by another process while the execution was `running`
 * under this worker's lease (it then committed the time-out as `run_at`). The waits found
 * decided are marked due in the run (`decided`); `inDatabase` (a cluster, where the run is not
 * kept) also makes their rows and the execution due, for a claim to resume it. Read after the
 * wait's commit, this misses nothing: a decision committed before it is seen here, one committed
 * after it finds the wait (approval-store.ts `recordDecision`). Only runs waiting on an approval
 * or agent step pay the read.
 */
export async function decidedWhileHeld(run: RunHost, root: FrameState, inDatabase: boolean): Promise<boolean> {
  const waits = waitsOnDecisions(run, root);
  if (waits.length === 0) return false;
  const { db, clock } = run.deps;
  const open = await listOpenDecisions(db, run.execution.id);
  if (open.length === 0) return false;
  const steps = new Set(open.map((d) => d.step_id));
  const nodes = new Set(open.map((d) => d.node_id));
  const due = waits.filter(({ waiting, type }) => (type === 'approval' ? steps.has(waiting.stepId!) : nodes.has(waiting.nodeId)));
  for (const { waiting } of due) run.decided.add(waiting.stepId!);
  if (due.length === 0 || !inDatabase) return due.length > 0;
  const now = clock.now();
  for (const { waiting } of due) await updateStep(db, waiting.stepId!, { resume_at: now, updated_at: now });
  await updateExecution(db, run.execution.id, { run_at: now, updated_at: now }, ['waiting']);
  return true;
}

/** The frame's waiting approval and agent steps (its loops' current iterations included). */
function waitsOnDecisions(run: RunHost, frame: FrameState): { waiting: WaitingNode; type: string }[] {
  const found: { waiting: WaitingNode; type: string }[] = [];
  for (const waiting of frame.waiting.values()) {
    const type = frame.plan.nodes.get(waiting.nodeId)?.type ?? '';
    if (waiting.stepId !== null && (type === 'approval' || type === 'agent')) found.push({ waiting, type });
    const current = waiting.loop ? run.loops.get(waiting.nodeId)?.current : undefined;
    if (current) found.push(...waitsOnDecisions(run, current));
  }
  return found;
}

/** What an agent step's attempt uses to wait for its tools' approvals (StepRunContext.approvals). */
export function nodeApprovals(run: RunHost, nodeId: string): StepApprovals {
  const { db, clock, settings } = run.deps;
  return {
    links: (stepId, expiresAt) =>
      settings.approvalLinks?.({ executionId: run.execution.id, stepId, expiresAt }) ?? { approve_url: null, reject_url: null },
    async decision(stepId, timedOut) {
      let decision = await findDecision(db, stepId);
      if (!decision && timedOut) {
        const timeout: ApprovalDecision = {
          decision: 'timed_out',
          comment: null,
          input: null,
          decidedAt: clock.now(),
          decidedBy: 'timeout',
        };
        const owner = { stepId, workspaceId: run.execution.workspace_id, executionId: run.execution.id, nodeId };
        decision = (await insertDecision(db, owner, timeout)) ? timeout : await findDecision(db, stepId);
      }
      if (!decision) return null;
      return {
        decision: decision.decision,
        comment: decision.comment,
        input: decision.input,
        decided_at: decision.decidedAt,
        decided_by: decision.decidedBy,
      };
    },
  };
}
