import { describe, expect, it } from 'vitest';
import { ApprovalLinks } from './approval-links.js';

const claim = {
  executionId: '01a252cc-87c1-7053-a2c7-50a478b3520d',
  stepId: '01a252cc-87c2-7411-8cb0-ea90bb856ea1',
  decision: 'approve' as const,
  expiresAt: '2026-11-01T00:10:00.000000Z',
};

describe('approval links', () => {
  const links = new ApprovalLinks('a-secret-key-a-secret-key-0123456789', 'https://sy.example/');

  it('are absolute URLs under /approvals whose token reads back as its claim', () => {
    const { approve_url, reject_url } = links.make(claim);
    expect(approve_url).toMatch(/^https:\/\/sy\.example\/approvals\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(links.read(approve_url.split('/approvals/')[1]!)).toEqual(claim);
    expect(links.read(reject_url.split('/approvals/')[1]!)).toEqual({ ...claim, decision: 'reject' });
  });

  it('reads nothing from a token altered, signed with another key, or malformed', () => {
    const token = links.token(claim);
    const [payload, tag] = token.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify([1, claim.executionId, claim.stepId, 'approve', '2099-01-01T00:00:00.000000Z'])).toString(
      'base64url',
    );
    expect(links.read(`${forged}.${tag}`)).toBeNull();
    expect(links.read(`${payload}.${tag.slice(0, -1)}A`)).toBeNull();
    expect(links.read(new ApprovalLinks('another-key-another-key-0123456789', 'https://sy.example').token(claim))).toBeNull();
    for (const bad of ['', '.', 'abc', `${payload}.${tag}.x`, `${payload}`, 'x'.repeat(2000)]) expect(links.read(bad)).toBeNull();
  });
});
