import type { FastifyReply } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import { safeEqual } from '../../lib/secrets.js';
import { isPlainObject } from '../../lib/json.js';
import { DEFAULT_EMAIL_ATTACHMENT_MAX_BYTES } from '../../steps/email/index.js';
import { parseJsonBody } from '../../webhooks/parse-json-body.js';
import type { PlatformContext } from '../platform-context.js';
import type { ResolvedInstallation } from '../platform-directory.js';
import type { PlatformDelivery, PlatformEndpoint } from '../platform-routes.js';
import { attachmentOf, bareAddress, messageIds, type EmailMessage } from './email-message.js';
import { EMAIL_MAX_BODY_BYTES } from './mailgun-endpoint.js';
import { routeEmail } from './email-routing.js';

/** Compared when no installation exists, so a miss costs what a wrong password costs. */
const NO_CREDENTIALS = 'switchyard\0no-postmark-installation';

/**
 * `POST {base_url}/webhooks/inbound/postmark`: Postmark's inbound webhook (JSON). Postmark signs
 * nothing; the webhook URL carries HTTP Basic credentials, which are matched in constant time
 * against every Postmark installation's before the body is read. The installations whose
 * credentials match are the only ones the delivery may reach: a recipient outside them is
 * dropped with a 200, so valid credentials of one workspace cannot reach another's workflows.
 * Unknown credentials are 401, exactly like wrong ones.
 */
export function postmarkEndpoint(ctx: PlatformContext): PlatformEndpoint {
  return {
    provider: 'postmark',
    path: '/postmark',
    maxBodyBytes: EMAIL_MAX_BODY_BYTES,
    openapi: OPENAPI,
    handle: (delivery, reply) => handlePostmark(ctx, delivery, reply),
  };
}

async function handlePostmark(ctx: PlatformContext, delivery: PlatformDelivery, reply: FastifyReply): Promise<FastifyReply> {
  const presented = basicCredentials(delivery.headers.authorization);
  const installations = await ctx.directory.installations('postmark');
  const allowed: ResolvedInstallation[] = [];
  const given = presented === null ? '' : `${presented.user}\0${presented.password}`;
  for (const installation of installations) {
    const { basic_user: user, basic_password: password } = installation.credentials;
    // Every installation is compared (no early exit): the time taken does not say which matched.
    const ok = safeEqual(user && password ? `${user}\0${password}` : NO_CREDENTIALS, given);
    if (ok && presented !== null && user && password) allowed.push(installation);
  }
  if (installations.length === 0) safeEqual(NO_CREDENTIALS, given);
  if (allowed.length === 0) {
    delivery.log.info(
      { provider: 'postmark', reason: presented === null ? 'no Basic credentials' : 'unknown credentials' },
      'platform delivery not authenticated',
    );
    throw new AppError('unauthorized', 'the delivery is not authenticated', undefined, {
      headers: { 'www-authenticate': 'Basic realm="switchyard"' },
    });
  }

  const type = String(delivery.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type !== 'application/json') throw new AppError('invalid_body', 'the body must be application/json', { header: 'Content-Type' });
  // The webhook steps' parser: a located syntax error, and JSON nested deeper than can be
  // stored (the event is) refused as 400 instead of failing the start with a 500.
  const parsed = parseJsonBody(delivery.body.toString('utf8'));
  if (!parsed.ok) throw new AppError('invalid_body', parsed.detail, { pointer: '' });
  const body = parsed.value;
  if (!isPlainObject(body)) throw new AppError('invalid_body', 'the body must be a JSON object', { pointer: '' });
  const maxBytes = ctx.emailAttachmentMaxBytes ?? DEFAULT_EMAIL_ATTACHMENT_MAX_BYTES;
  const message = messageFromPostmark(body, maxBytes);
  const recipients = [
    typeof body.OriginalRecipient === 'string' ? body.OriginalRecipient : '',
    ...emails(body.ToFull),
    ...emails(body.CcFull),
    ...emails(body.BccFull),
  ].filter(Boolean);
  const byAccount = new Map(allowed.map((i) => [i.accountId.toLowerCase(), i]));
  const outcomes = await routeEmail(
    ctx,
    { provider: 'postmark', recipients, message, event: postmarkEvent(body), rawForKey: delivery.body },
    async (address, domain) => byAccount.get(address) ?? byAccount.get(domain) ?? null,
  );
  return reply
    .code(200)
    .type('application/json')
    .send({ ok: true, started: outcomes.filter((o) => o === 'started').length });
}

/**
 * The trigger's `event`: Postmark's inbound JSON as posted (DESIGN.md: the raw provider event),
 * but each attachment's base64 `Content`: the payload lists the attachments and carries the
 * content of those under the size limit, which a copy here would bypass.
 */
function postmarkEvent(body: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(body.Attachments)) return body;
  const attachments = body.Attachments.map((attachment: unknown) => {
    if (!isPlainObject(attachment)) return attachment;
    const { Content: _content, ...listed } = attachment;
    return listed;
  });
  return { ...body, Attachments: attachments };
}

function basicCredentials(header: string | string[] | undefined): { user: string; password: string } | null {
  if (typeof header !== 'string') return null;
  const match = /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header.trim());
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function emails(list: unknown): string[] {
  return Array.isArray(list)
    ? list.flatMap((entry) => (isPlainObject(entry) && typeof entry.Email === 'string' ? [entry.Email.toLowerCase()] : []))
    : [];
}

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** Postmark's inbound JSON: its addresses, bodies, headers and base64 attachments. */
export function messageFromPostmark(body: Record<string, unknown>, maxBytes: number): EmailMessage {
  const headers = new Map<string, string>();
  if (Array.isArray(body.Headers)) {
    for (const h of body.Headers)
      if (isPlainObject(h) && typeof h.Name === 'string' && typeof h.Value === 'string' && !headers.has(h.Name.toLowerCase()))
        headers.set(h.Name.toLowerCase(), h.Value);
  }
  const from = isPlainObject(body.FromFull) && typeof body.FromFull.Email === 'string' ? body.FromFull.Email : str(body.From);
  const attachments = Array.isArray(body.Attachments)
    ? body.Attachments.flatMap((a) =>
        isPlainObject(a) && typeof a.Content === 'string'
          ? [attachmentOf(str(a.Name), str(a.ContentType) ?? 'application/octet-stream', Buffer.from(a.Content, 'base64'), maxBytes)]
          : [],
      )
    : [];
  return {
    from: from === null ? null : bareAddress(from),
    to: emails(body.ToFull),
    cc: emails(body.CcFull),
    subject: str(body.Subject) ?? '',
    text: str(body.TextBody),
    html: str(body.HtmlBody),
    message_id: messageIds(headers.get('message-id'))[0] ?? null,
    in_reply_to: messageIds(headers.get('in-reply-to'))[0] ?? null,
    references: messageIds(headers.get('references')),
    attachments,
  };
}

const OPENAPI = {
  post: {
    tags: ['Platform endpoints'],
    summary: 'Postmark inbound email (platform endpoint)',
    description:
      "Postmark's inbound webhook. Authenticated with HTTP Basic credentials in the webhook URL (`https://user:password@host/webhooks/inbound/postmark`), compared in constant time with each Postmark installation's before the body is read; routed by recipient address or domain among the installations those credentials belong to; deduplicated by Message-ID per recipient.",
    security: [],
    parameters: [{ name: 'Authorization', in: 'header', required: true, schema: { type: 'string' } }],
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
    responses: {
      '200': {
        description: 'Accepted (also for a recipient the credentials do not cover)',
        content: {
          'application/json': { schema: { type: 'object', properties: { ok: { type: 'boolean' }, started: { type: 'integer' } } } },
        },
      },
      '400': { description: 'Not a JSON object' },
      '401': { description: 'Basic credentials missing or unknown' },
      '413': { description: 'Body over the limit' },
      '429': { description: 'Too many deliveries from this address' },
    },
  },
} as const;
