import { JOURNAL_KINDS } from '../steps/step-journal.js';
import type { Kysely, Transaction } from 'kysely';
import type { ApprovalDecisionsTable, Database } from '../db/schema.js';
import { flushBuffered } from '../db/transaction-buffer.js';
import { updateExecution, updateStep } from './execution-store.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What a person (or the time-out) decided on an approval step. */
export type ApprovalVerdict = 'approve' | 'reject';
export const APPROVAL_VERDICTS = ['approve', 'reject'] as const satisfies readonly ApprovalVerdict[];

/** A decision as given: by a user (the API), a signed link (`url`) or the time-out (`timeout`). */
export interface ApprovalDecision {
  decision: ApprovalVerdict | 'timed_out';
  comment: string | null;
  input: unknown;
  decidedAt: string;
  decidedBy: string;
}

/** Why a decision was refused (the caller answers 404, 409 or 410). */
export type DecisionRefusal = 'no_step' | 'not_approval' | 'not_waiting' | 'expired' | 'decided';

/**
 * A decision recorded (`due`: the waiting row it made due, null when the attempt asking for it
 * has not parked yet), or why not.
 */
export type DecisionRecorded =
  { recorded: true; decision: ApprovalDecision; due: string | null } | { recorded: false; refusal: DecisionRefusal };

/**
 * What a decision is on: an approval step's own waiting row (its output's `expires_at` is the
 * time-out), or a tool call of an agent step, a journal row `waiting` until it is decided (its
 * output's `approval.expires_at`; the agent's attempt row is what waits).
 */
interface ApprovalOutput {
  expires_at?: unknown;
  approval?: { expires_at?: unknown };
}

function fromRow(row: ApprovalDecisionsTable): ApprovalDecision {
  return {
    decision: row.decision as ApprovalDecision['decision'],
    comment: row.comment,
    input: row.input === null ? null : JSON.parse(row.input),
    decidedAt: row.decided_at,
    decidedBy: row.decided_by,
  };
}

/** The decision on an approval step, if one was made. */
export async function findDecision(db: Db, stepId: string): Promise<ApprovalDecision | undefined> {
  const row = await db.selectFrom('approval_decisions').selectAll().where('step_id', '=', stepId).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/**
 * Inserts a decision unless the step has one: true when this one landed. The primary key on
 * `step_id` decides between concurrent deciders (two API calls, a link and the time-out): on
 * PostgreSQL the second insert waits for the first's commit and then does nothing.
 */
export async function insertDecision(
  db: Db,
  owner: { stepId: string; workspaceId: string; executionId: string; nodeId: string },
  decision: ApprovalDecision,
): Promise<boolean> {
  const inserted = await db
    .insertInto('approval_decisions')
    .values({
      step_id: owner.stepId,
      workspace_id: owner.workspaceId,
      execution_id: owner.executionId,
      node_id: owner.nodeId,
      decision: decision.decision,
      comment: decision.comment,
      input: decision.input === undefined || decision.input === null ? null : JSON.stringify(decision.input),
      decided_at: decision.decidedAt,
      decided_by: decision.decidedBy,
    })
    .onConflict((oc) => oc.column('step_id').doNothing())
    .returning('step_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * A person's decision on a waiting approval step of `executionId`, in the caller's transaction
 * (a group commit that locked the execution's row first): refused unless the step is an
 * approval that still waits and its time-out has not come (the link's expiry, `expires_at` of
 * its output). Recorded, the step becomes due now (`resume_at`) and, if the execution waits,
 * so does the execution (`run_at`), in the same commit: a crash cannot keep the decision and
 * lose the wake-up. May run more than once (a group commit retried alone): it decides from
 * what it reads.
 */
export async function recordDecision(
  trx: Transaction<Database>,
  target: { executionId: string; workspaceId: string; stepId: string },
  decision: ApprovalDecision,
): Promise<DecisionRecorded> {
  await flushBuffered(trx, 'execution_steps');
  const step = await trx
    .selectFrom('execution_steps')
    .select(['id', 'node_id', 'kind', 'status', 'output', 'loop_node_id'])
    .where('id', '=', target.stepId)
    .where('workflow_execution_id', '=', target.executionId)
    .where('workspace_id', '=', target.workspaceId)
    .executeTakeFirst();
  if (!step) return { recorded: false, refusal: 'no_step' };
  const output = (step.output === null ? {} : JSON.parse(step.output)) as ApprovalOutput;
  const tool = step.kind === 'tool_call';
  if (step.kind !== 'approval' && !(tool && output.approval)) return { recorded: false, refusal: 'not_approval' };
  // Decided already (its row completed or failed), or by the time-out in flight.
  const open = step.status === 'waiting';
  if (!open || (await findDecision(trx, step.id))) return { recorded: false, refusal: 'decided' };
  const expiresAt = tool ? output.approval?.expires_at : output.expires_at;
  if (typeof expiresAt !== 'string' || expiresAt <= decision.decidedAt) return { recorded: false, refusal: 'expired' };
  const owner = { stepId: step.id, workspaceId: target.workspaceId, executionId: target.executionId, nodeId: step.node_id };
  if (!(await insertDecision(trx, owner, decision))) return { recorded: false, refusal: 'decided' };
  const now = decision.decidedAt;
  const due = tool ? await waitingAttempt(trx, target.executionId, step.node_id, step.loop_node_id) : step.id;
  if (due !== null) await updateStep(trx, due, { resume_at: now, updated_at: now });
  await updateExecution(trx, target.executionId, { run_at: now, updated_at: now }, ['waiting']);
  return { recorded: true, decision, due };
}

/** The waiting attempt row of a node (an agent parked on a tool's approval), if it has parked. */
async function waitingAttempt(trx: Transaction<Database>, executionId: string, nodeId: string, loopNodeId: string | null) {
  let query = trx
    .selectFrom('execution_steps')
    .select('id')
    .where('workflow_execution_id', '=', executionId)
    .where('node_id', '=', nodeId)
    .where('status', '=', 'waiting')
    // The node's tool calls wait too (their journal rows); the attempt is the row of another kind.
    .where('kind', 'not in', [...JOURNAL_KINDS]);
  query = loopNodeId === null ? query.where('loop_node_id', 'is', null) : query.where('loop_node_id', '=', loopNodeId);
  return (await query.executeTakeFirst())?.id ?? null;
}

/**
 * Decided approvals of an execution not taken up yet (the approval step or the tool call
 * still `waiting`), with their nodes: a run that parked while they were decided
 * finds them here (run/approval-runner.ts `decidedWhileHeld`).
 */
export function listOpenDecisions(db: Db, executionId: string): Promise<{ step_id: string; node_id: string }[]> {
  return db
    .selectFrom('approval_decisions as d')
    .innerJoin('execution_steps as s', 's.id', 'd.step_id')
    .select(['d.step_id', 'd.node_id'])
    .where('d.execution_id', '=', executionId)
    .where('s.status', '=', 'waiting')
    .execute();
}
