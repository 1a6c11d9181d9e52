import type { ToolCall } from '../../ai/chat-types.js';
import { WaitForApproval } from '../../engine/step-errors.js';
import { formatMicros, parseTimestampMicros } from '../../lib/clock.js';
import { DEFAULT_APPROVAL_TIMEOUT_MS } from '../approval/index.js';
import type { JournalEntry, StepJournal } from '../step-journal.js';
import type { StepRunContext } from '../step-runtime.js';
import type { AgentTool, ToolOutcome } from './agent-tools.js';

/** What a tool call asking for approval records in its journal row's output (`approval`). */
interface AskedApproval {
  message: string;
  approve_url: string | null;
  reject_url: string | null;
  expires_at: string;
}

/**
 * A call of a tool with `requires_approval`, before it runs. The first time, the call's journal
 * row is committed `waiting` with the approval asked for (its id is what a decision names: the
 * API's `step_id`, the links' step), and the attempt parks (`WaitForApproval`) until a decision
 * or the time-out: no worker is held. Resumed, the attempt replays its journal to this call and
 * reads the decision: approved, the tool runs (answers null); rejected or timed out, the model
 * gets the tool's error. The time-out is inserted as a decision, so a person deciding at that
 * instant and the time-out cannot both count (engine/approval-store.ts).
 */
export async function approveToolCall(
  context: StepRunContext,
  journal: StepJournal,
  entry: JournalEntry,
  tool: AgentTool,
  call: ToolCall,
  done: JournalEntry | undefined,
): Promise<ToolOutcome | null> {
  const approvals = context.approvals;
  if (!approvals)
    return {
      isError: true,
      result: { code: 'not_available', message: 'tools that require approval need the engine of a running service' },
    };
  const asked = done?.data.approval as AskedApproval | undefined;
  if (!asked) {
    const timeout = (tool.configured as { approval_timeout_ms?: number }).approval_timeout_ms ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    const resumeAtMs = context.clock.nowMs() + timeout;
    const expiresAt = formatMicros(resumeAtMs * 1000);
    const links = approvals.links(entry.id, expiresAt);
    const approval: AskedApproval = {
      message: `The agent asks to call the tool "${call.name}" with ${JSON.stringify(call.arguments)}.`,
      approve_url: links.approve_url,
      reject_url: links.reject_url,
      expires_at: expiresAt,
    };
    // DESIGN.md: the tool call's record waits, with the links at the top of its output as an
    // approval step's (`approval` keeps what a resumed attempt replays).
    entry.data.approval = approval;
    Object.assign(entry.data, { approve_url: approval.approve_url, reject_url: approval.reject_url, expires_at: approval.expires_at });
    entry.status = 'waiting';
    await journal.record(entry);
    throw new WaitForApproval(resumeAtMs, { waiting_for_approval: Object.assign({ step_id: entry.id, tool: call.name }, approval) });
  }
  entry.data.approval = asked;
  const expiresMs = Math.ceil((parseTimestampMicros(asked.expires_at) ?? 0) / 1000);
  const decision = await approvals.decision(entry.id, context.clock.nowMs() >= expiresMs);
  // Resumed before its decision (another wait of the run was due): it waits on.
  if (!decision)
    throw new WaitForApproval(expiresMs, { waiting_for_approval: Object.assign({ step_id: entry.id, tool: call.name }, asked) });
  entry.data.decision = decision;
  if (decision.decision === 'approve') return null;
  // A rejection reaches the model as the text `rejected: <comment>` (DESIGN.md "agent tool approval").
  if (decision.decision === 'reject') return { isError: true, result: `rejected: ${decision.comment ?? ''}` };
  return {
    isError: true,
    result: {
      code: 'approval_timed_out',
      message: `no one approved the call of "${call.name}" before its time-out; it did not run`,
    },
  };
}
