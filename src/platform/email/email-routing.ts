import { createHash } from 'node:crypto';
import type { AppProvider } from '../../db/schema.js';
import type { PlatformContext } from '../platform-context.js';
import type { ResolvedInstallation } from '../platform-directory.js';
import { startPlatformRuns, type PlatformStartResult } from '../platform-start.js';
import type { LiveTrigger } from '../platform-triggers.js';
import { bareAddress, type EmailMessage } from './email-message.js';

/** Finds the installation of a delivered address: the address's own first, then its domain's. */
export type RecipientResolver = (address: string, domain: string) => Promise<ResolvedInstallation | null>;

export interface EmailDelivery {
  provider: Extract<AppProvider, 'mailgun' | 'postmark'>;
  /** The addresses the provider delivered the message to (envelope recipients). */
  recipients: string[];
  message: EmailMessage;
  event: Record<string, unknown>;
  /** Hashed when the message has no Message-ID, so a redelivery of the same bytes is still one. */
  rawForKey: Buffer | string;
}

/** Recipients of one delivery are bounded: a message to thousands of addresses is not a trigger. */
const MAX_RECIPIENTS = 50;

/**
 * Routes one verified email delivery: each delivered address (at most 50) goes to the workspace
 * that installed it or its domain; one without an installation is dropped (counted). Deduplicated
 * by Message-ID per recipient (a redelivery starts nothing), and each workflow starts once per
 * Message-ID however many of its recipients arrive, separately or together.
 */
export async function routeEmail(
  ctx: PlatformContext,
  delivery: EmailDelivery,
  resolve: RecipientResolver,
): Promise<PlatformStartResult['outcome'][]> {
  const messageKey = delivery.message.message_id ?? `sha256:${createHash('sha256').update(delivery.rawForKey).digest('hex')}`;
  const recipients = [...new Set(delivery.recipients.map(bareAddress).filter((a) => a.includes('@')))].slice(0, MAX_RECIPIENTS);
  const outcomes: PlatformStartResult['outcome'][] = [];
  for (const recipient of recipients) {
    const domain = recipient.slice(recipient.lastIndexOf('@') + 1);
    const installation = await resolve(recipient, domain);
    if (!installation) {
      ctx.metrics?.platformEvent(delivery.provider, 'unknown_account');
      continue;
    }
    const triggers = (await ctx.triggers.list(installation.workspaceId, 'email')).filter((t) =>
      matches(t, recipient, domain, delivery.message.subject),
    );
    const result = await startPlatformRuns(ctx, {
      provider: delivery.provider,
      workspaceId: installation.workspaceId,
      eventKey: `${messageKey}|${recipient}`,
      workflowKey: messageKey,
      triggers,
      trigger: { payload: { ...delivery.message, recipient }, event: { provider: delivery.provider, ...delivery.event } },
    });
    ctx.metrics?.platformEvent(delivery.provider, result.outcome);
    outcomes.push(result.outcome);
  }
  return outcomes;
}

function matches(trigger: LiveTrigger, recipient: string, domain: string, subject: string): boolean {
  const { recipients, subject_contains: contains } = trigger.config;
  if (Array.isArray(recipients) && recipients.length > 0) {
    const wanted = recipients.map((r) => String(r).toLowerCase());
    if (!wanted.includes(recipient) && !wanted.includes(domain)) return false;
  }
  if (typeof contains === 'string' && contains !== '' && !subject.toLowerCase().includes(contains.toLowerCase())) return false;
  return true;
}

/** Installations by account id, matched lower-case: an exact address wins over its domain. */
export async function resolveByAccount(
  ctx: PlatformContext,
  provider: AppProvider,
  address: string,
  domain: string,
): Promise<ResolvedInstallation | null> {
  return (await ctx.directory.installation(provider, address)) ?? (await ctx.directory.installation(provider, domain));
}
