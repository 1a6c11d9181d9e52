import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalTimestamp } from '../../lib/clock.js';
import type { ApprovalVerdict } from '../../engine/approval-store.js';
import type { ApprovalLinkMaker } from '../../steps/step-runtime.js';

/** What a signed approval link says: which step, which decision, until when. */
export interface ApprovalLinkClaim {
  executionId: string;
  stepId: string;
  decision: ApprovalVerdict;
  expiresAt: string;
}

/** Links we issue are ~250 characters; anything far longer is not one of ours. */
const MAX_TOKEN_LENGTH = 1024;
const TAG_BYTES = 32;

/**
 * The one-time links of a waiting approval step (`POST {base}/approvals/{token}`). A token is
 * its claim (execution, step, decision, expiry) in base64url and an HMAC-SHA256 of it under a
 * key derived from the server's secret key, which is kept across restarts, so links outlive
 * them. One-time-ness is not in the token: the step's decision row takes one decision only
 * (engine/approval-store.ts), so the second use of either link is refused there. The claim is
 * not secret (the step's ids and its expiry); a forged or altered token fails the tag check.
 */
export class ApprovalLinks {
  private readonly key: Buffer;

  constructor(
    secretKey: string,
    private readonly baseUrl: string,
  ) {
    this.key = createHmac('sha256', secretKey).update('switchyard approval link v1').digest();
  }

  /** The links of one waiting step, for StepSettings.approvalLinks. */
  readonly make: ApprovalLinkMaker = ({ executionId, stepId, expiresAt }) => ({
    approve_url: this.url({ executionId, stepId, decision: 'approve', expiresAt }),
    reject_url: this.url({ executionId, stepId, decision: 'reject', expiresAt }),
  });

  url(claim: ApprovalLinkClaim): string {
    return `${this.baseUrl.replace(/\/+$/, '')}/approvals/${this.token(claim)}`;
  }

  token(claim: ApprovalLinkClaim): string {
    const payload = Buffer.from(JSON.stringify([1, claim.executionId, claim.stepId, claim.decision, claim.expiresAt])).toString(
      'base64url',
    );
    return `${payload}.${this.tag(payload).toString('base64url')}`;
  }

  /** The claim of a token we signed; null for anything else (malformed, altered, another key). */
  read(token: string): ApprovalLinkClaim | null {
    const [payload, tag, ...rest] = token.length > MAX_TOKEN_LENGTH ? [] : token.split('.');
    if (!payload || !tag || rest.length > 0 || !/^[A-Za-z0-9_-]+$/.test(payload)) return null;
    const given = Buffer.from(tag, 'base64url');
    if (given.length !== TAG_BYTES || !timingSafeEqual(given, this.tag(payload))) return null;
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (!Array.isArray(fields) || fields.length !== 5 || fields[0] !== 1) return null;
    const [, executionId, stepId, decision, expiresAt] = fields as unknown[];
    if (typeof executionId !== 'string' || typeof stepId !== 'string') return null;
    if (decision !== 'approve' && decision !== 'reject') return null;
    if (typeof expiresAt !== 'string' || canonicalTimestamp(expiresAt) !== expiresAt) return null;
    return { executionId, stepId, decision, expiresAt };
  }

  private tag(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest();
  }
}
