import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError, notFound } from '../../errors/app-error.js';
import type { Engine } from '../../engine/engine.js';
import { APPROVAL_VERDICTS, type ApprovalDecision, type ApprovalVerdict, type DecisionRefusal } from '../../engine/approval-store.js';
import { findExecution, findExecutionInWorkspace, type ExecutionRow } from '../../engine/execution-store.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { escapePointerToken } from '../../lib/json-pointer.js';
import type { Actor } from '../workflows/workflow-service.js';
import type { ApprovalLinks } from './approval-links.js';

/** A comment is a note for the record, not a document. */
export const MAX_APPROVAL_COMMENT_LENGTH = 10_000;

/** What a decision recorded: the step it was on and how it was decided. */
export interface DecisionAnswer {
  execution_id: string;
  step_id: string;
  decision: ApprovalVerdict;
  comment: string | null;
  input: unknown;
  decided_at: string;
  decided_by: string;
}

/** What a link's optional JSON body may give with the decision. */
export interface LinkDecisionBody {
  comment: string | null;
  input: unknown;
}

/** A decision's members, checked (422 with a pointer into `/data`). */
export function readDecision(data: Record<string, unknown>): { decision: ApprovalVerdict; comment: string | null; input: unknown } {
  for (const key of Object.keys(data)) {
    if (key !== 'decision' && key !== 'comment' && key !== 'input')
      throw new AppError('validation_failed', `unknown member "${key}": a decision takes decision, comment and input`, {
        pointer: `/data/${escapePointerToken(key)}`,
      });
  }
  const decision = data.decision;
  if (!APPROVAL_VERDICTS.includes(decision as ApprovalVerdict))
    throw new AppError('validation_failed', 'decision must be "approve" or "reject"', { pointer: '/data/decision' });
  const comment = data.comment ?? null;
  if (comment !== null && (typeof comment !== 'string' || comment.length > MAX_APPROVAL_COMMENT_LENGTH))
    throw new AppError('validation_failed', `comment must be a string of at most ${MAX_APPROVAL_COMMENT_LENGTH} characters`, {
      pointer: '/data/comment',
    });
  return { decision: decision as ApprovalVerdict, comment, input: data.input === undefined ? null : data.input };
}

/**
 * The optional JSON body of a link's POST (`{comment?, input?}`): anything that is not a JSON
 * object gives neither, and other members are ignored (chat tools add their own). A comment
 * that is not a string, or is too long, is 400.
 */
export function readLinkBody(body: unknown): LinkDecisionBody {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { comment: null, input: null };
  const { comment = null, input = null } = body as Record<string, unknown>;
  if (comment !== null && (typeof comment !== 'string' || comment.length > MAX_APPROVAL_COMMENT_LENGTH))
    throw new AppError('bad_request', `comment must be a string of at most ${MAX_APPROVAL_COMMENT_LENGTH} characters`, {
      pointer: '/comment',
    });
  return { comment, input };
}

/**
 * Decisions on waiting approval steps: through the API (a user of the execution's workspace)
 * or a signed link (engine/approval-store.ts records them exactly once; docs/run-control.md).
 */
export class ApprovalService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly engine: Engine,
    private readonly links: ApprovalLinks,
  ) {}

  /** `POST /executions/:id/steps/:step_id/decision`: 404 outside the actor's workspace, 409 once decided or timed out. */
  async decide(actor: Actor, executionId: string, stepId: string, data: Record<string, unknown>): Promise<DecisionAnswer> {
    // What the path names is found first: another workspace's id is 404 whatever the body holds.
    const execution = isUuid(executionId) ? await findExecutionInWorkspace(this.db, actor.workspaceId, executionId) : undefined;
    if (!execution) throw notFound('execution');
    if (!isUuid(stepId)) throw notFound('step');
    const given = readDecision(data);
    return this.record(execution, stepId, { ...given, decidedAt: this.clock.now(), decidedBy: actor.userId }, false);
  }

  /**
   * `POST /approvals/:token`: 404 for a token that is not ours, 410 once decided (the link is
   * used, whichever of the two links decided) or after the time-out (expired).
   */
  async decideByLink(token: string, given: LinkDecisionBody = { comment: null, input: null }): Promise<DecisionAnswer> {
    const claim = this.links.read(token);
    if (!claim) throw notFound('approval link');
    const now = this.clock.now();
    if (claim.expiresAt <= now) throw expired();
    const execution = await findExecution(this.db, claim.executionId);
    if (!execution) throw notFound('approval link');
    const decision = { decision: claim.decision, comment: given.comment, input: given.input, decidedAt: now, decidedBy: 'url' };
    return this.record(execution, claim.stepId, decision, true);
  }

  private async record(execution: ExecutionRow, stepId: string, decision: ApprovalDecision, byLink: boolean): Promise<DecisionAnswer> {
    const result = await this.engine.decide(execution, stepId, decision);
    if (!result.recorded) throw refused(result.refusal, byLink);
    const { decidedAt, decidedBy, comment, input } = result.decision;
    return {
      execution_id: execution.id,
      step_id: stepId,
      decision: result.decision.decision as ApprovalVerdict,
      comment,
      input,
      decided_at: decidedAt,
      decided_by: decidedBy,
    };
  }
}

function expired(): AppError {
  return new AppError('link_expired', 'this approval link has expired: the step timed out');
}

function refused(refusal: DecisionRefusal, byLink: boolean): AppError {
  switch (refusal) {
    case 'no_step':
      return notFound(byLink ? 'approval link' : 'step');
    case 'not_approval':
      return new AppError('invalid_state', 'this step is not an approval step');
    case 'not_waiting':
    case 'decided':
      return byLink
        ? new AppError('link_used', 'this approval link can no longer be used: the step has already been decided')
        : new AppError('invalid_state', 'this approval step has already been decided');
    case 'expired':
      return byLink ? expired() : new AppError('invalid_state', 'this approval step has timed out: it takes no more decisions');
  }
}
