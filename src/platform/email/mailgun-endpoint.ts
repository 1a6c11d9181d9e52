import type { FastifyReply } from 'fastify';
import { simpleParser, type ParsedMail } from 'mailparser';
import { AppError } from '../../errors/app-error.js';
import { addMs } from '../../lib/clock.js';
import { DEFAULT_EMAIL_ATTACHMENT_MAX_BYTES } from '../../steps/email/index.js';
import { pruneMailgunTokens, recordMailgunToken } from '../../store/mailgun-token-repository.js';
import type { PlatformContext } from '../platform-context.js';
import type { PlatformDelivery, PlatformEndpoint } from '../platform-routes.js';
import { attachmentOf, bareAddress, messageFromMime, messageIds, type EmailMessage } from './email-message.js';
import { resolveByAccount, routeEmail } from './email-routing.js';
import { parseFormFields, type FormFields } from './form-fields.js';
import { checkMailgunSignature, MAILGUN_TOLERANCE_S } from './mailgun-signature.js';

/** Mailgun accepts messages up to 25 MB; base64 and the form around them add a third. */
export const EMAIL_MAX_BODY_BYTES = 36 * 1024 * 1024;

/** Pruning seen tokens at most this often per process: one delete a minute, not one per delivery. */
const PRUNE_EVERY_MS = 60_000;

/**
 * `POST {base_url}/webhooks/inbound/mailgun` and `POST {base_url}/webhooks/inbound/mailgun/mime`:
 * targets of a Mailgun route's `forward()` (form or multipart). Mailgun posts the raw message
 * (`body-mime`) only to a URL that ends in `mime`, and its parsed fields to any other; the second
 * path exists so the URL the guide gives ends in `mime` and reaches mailparser. Both paths verify
 * and handle alike and accept either shape. Mailgun signs `timestamp` + `token` inside the form,
 * so the form fields are read first; the message itself (the MIME, the attachments) is parsed
 * only after the signature, the 300 s window and the unseen token are checked. A replayed token
 * and a message mailparser refuses are 406, which Mailgun does not retry; a verified delivery for
 * an address no workspace installed is 200 and dropped.
 */
export function mailgunEndpoints(ctx: PlatformContext): PlatformEndpoint[] {
  let prunedAt = 0;
  const prune = async () => {
    const nowMs = ctx.clock.nowMs();
    if (nowMs - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = nowMs;
    await pruneMailgunTokens(ctx.db, addMs(ctx.clock.now(), -2 * MAILGUN_TOLERANCE_S * 1000));
  };
  const endpoint = (path: string, openapi: Record<string, unknown>): PlatformEndpoint => ({
    provider: 'mailgun',
    path,
    maxBodyBytes: EMAIL_MAX_BODY_BYTES,
    openapi,
    handle: (delivery, reply) => handleMailgun(ctx, delivery, reply, prune),
  });
  return [
    endpoint('/mailgun', openApiOf(FIELDS_SUMMARY, FIELDS_DESCRIPTION)),
    endpoint('/mailgun/mime', openApiOf(MIME_SUMMARY, MIME_DESCRIPTION)),
  ];
}

async function handleMailgun(
  ctx: PlatformContext,
  delivery: PlatformDelivery,
  reply: FastifyReply,
  prune: () => Promise<void>,
): Promise<FastifyReply> {
  const form = await parseFormFields(String(delivery.headers['content-type'] ?? ''), delivery.body);
  const field = (name: string) => form.fields.get(name);
  const signingKey = (await ctx.directory.app('mailgun'))?.secrets.signing_key;
  const check = signingKey
    ? checkMailgunSignature(
        signingKey,
        { timestamp: field('timestamp'), token: field('token'), signature: field('signature') },
        ctx.clock.nowMs(),
      )
    : ({ ok: false, reason: 'no signing key' } as const);
  if (!check.ok) {
    delivery.log.info({ provider: 'mailgun', reason: check.reason }, 'platform delivery not authenticated');
    throw new AppError('unauthorized', 'the delivery is not authenticated');
  }
  // Before the answer is sent, so the next delivery sees the table pruned.
  await prune();
  if (!(await recordMailgunToken(ctx.db, field('token')!, ctx.clock.now(), (e) => ctx.dialect.isUniqueViolation(e)))) {
    delivery.log.info({ provider: 'mailgun' }, 'replayed Mailgun token refused');
    throw new AppError('not_acceptable', "this delivery's token was seen before (a replay)", { pointer: '/token' });
  }

  const maxBytes = ctx.emailAttachmentMaxBytes ?? DEFAULT_EMAIL_ATTACHMENT_MAX_BYTES;
  const mime = field('body-mime');
  const message = mime !== undefined ? messageFromMime(await parseMime(mime, delivery), maxBytes) : messageFromFields(form, maxBytes);
  const envelope =
    field('recipient')
      ?.split(',')
      .map((r) => r.trim())
      .filter(Boolean) ?? [];
  const recipients = envelope.length > 0 ? envelope : [...message.to, ...message.cc];
  const outcomes = await routeEmail(
    ctx,
    { provider: 'mailgun', recipients, message, event: mailgunEvent(form), rawForKey: mime ?? delivery.body },
    (address, domain) => resolveByAccount(ctx, 'mailgun', address, domain),
  );
  return reply
    .code(200)
    .type('application/json')
    .send({ ok: true, started: outcomes.filter((o) => o === 'started').length });
}

/**
 * The raw message, parsed. mailparser refuses some messages outright (more than 1,000 MIME parts,
 * a part's header block over 1 MB): a property of the message, which Mailgun would post again for
 * 8 hours on a 5xx. Such a verified delivery is 406, which Mailgun does not retry, and the log
 * line says why (no workflow starts, so it is the only trace).
 */
async function parseMime(mime: string, delivery: PlatformDelivery): Promise<ParsedMail> {
  try {
    return await simpleParser(mime);
  } catch (error) {
    const reason = (error as Error).message;
    delivery.log.warn({ provider: 'mailgun', reason, bytes: Buffer.byteLength(mime) }, 'Mailgun message refused: its MIME does not parse');
    throw new AppError('not_acceptable', `the message (body-mime) cannot be parsed: ${reason}`, { pointer: '/body-mime' });
  }
}

/**
 * The trigger's `event`: every field Mailgun posted, as posted (DESIGN.md: the raw provider
 * event), but the raw MIME (`body-mime`: the payload carries the parsed message, and its
 * attachments under the size limit) and the signature's `token` and `signature`, which are
 * verification material and no part of the message. Attachment files are not fields.
 */
function mailgunEvent(form: FormFields): Record<string, unknown> {
  const event: Record<string, unknown> = {};
  for (const [name, value] of form.fields) if (name !== 'body-mime' && name !== 'token' && name !== 'signature') event[name] = value;
  return event;
}

/** Mailgun's parsed fields (a `forward()` to a URL not asking for MIME). */
function messageFromFields(form: FormFields, maxBytes: number): EmailMessage {
  const field = (name: string) => form.fields.get(name);
  const list = (value: string | undefined) =>
    value
      ? value
          .split(',')
          .map(bareAddress)
          .filter((a) => a.includes('@'))
      : [];
  const headers = new Map<string, string>();
  try {
    const parsed = JSON.parse(field('message-headers') ?? '[]') as unknown;
    if (Array.isArray(parsed))
      for (const pair of parsed)
        if (Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string' && !headers.has(pair[0].toLowerCase()))
          headers.set(pair[0].toLowerCase(), pair[1]);
  } catch {
    // Headers that do not parse are left out; the message still routes by its fields.
  }
  return {
    from: list(field('from') ?? field('sender'))[0] ?? null,
    to: list(field('To') ?? headers.get('to')),
    cc: list(field('Cc') ?? headers.get('cc')),
    subject: field('subject') ?? '',
    text: field('body-plain') ?? null,
    html: field('body-html') ?? null,
    message_id: messageIds(field('Message-Id') ?? headers.get('message-id'))[0] ?? null,
    in_reply_to: messageIds(field('In-Reply-To') ?? headers.get('in-reply-to'))[0] ?? null,
    references: messageIds(field('References') ?? headers.get('references')),
    attachments: form.files.map((f) => attachmentOf(f.filename, f.contentType, f.content, maxBytes)),
  };
}

const MIME_SUMMARY = 'Mailgun inbound email, raw MIME (platform endpoint)';
const MIME_DESCRIPTION =
  "The `forward()` target to give a Mailgun route: the URL ends in `mime`, so Mailgun posts the raw message as `body-mime` (multipart), which is parsed with mailparser. Verified with the `timestamp`, `token` and `signature` fields (HMAC-SHA256 with the app's webhook signing key, timestamp within 300 s either way, a token accepted once); the message is read only then. Routed by recipient address or domain; deduplicated by Message-ID per recipient. Mailgun's parsed fields are accepted here too.";
const FIELDS_SUMMARY = 'Mailgun inbound email, parsed fields (platform endpoint)';
const FIELDS_DESCRIPTION =
  "A Mailgun route's `forward()` target for Mailgun's parsed fields (`body-plain`, `body-html`, `message-headers`, attachment files); use `/webhooks/inbound/mailgun/mime` for the raw message. Verified with the `timestamp`, `token` and `signature` fields (HMAC-SHA256 with the app's webhook signing key, timestamp within 300 s either way, a token accepted once); the fields (or a `body-mime`) are read only then. Routed by recipient address or domain; deduplicated by Message-ID per recipient.";

const FORM_SCHEMA = {
  type: 'object',
  required: ['timestamp', 'token', 'signature'],
  properties: {
    timestamp: { type: 'string' },
    token: { type: 'string' },
    signature: { type: 'string' },
    recipient: { type: 'string' },
    'body-mime': { type: 'string' },
  },
} as const;

function openApiOf(summary: string, description: string) {
  return {
    post: {
      tags: ['Platform endpoints'],
      summary,
      description,
      security: [],
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': { schema: FORM_SCHEMA },
          'application/x-www-form-urlencoded': { schema: FORM_SCHEMA },
        },
      },
      responses: {
        '200': {
          description: 'Accepted (also for a recipient no workspace installed)',
          content: {
            'application/json': { schema: { type: 'object', properties: { ok: { type: 'boolean' }, started: { type: 'integer' } } } },
          },
        },
        '400': { description: 'Not a form' },
        '401': { description: 'Signature missing, wrong or outside the 300 s window' },
        '406': {
          description:
            'The token was seen before (a replay), or the raw message cannot be parsed (over 1,000 MIME parts, a part header over 1 MB); Mailgun does not retry',
        },
        '413': { description: 'Body over the limit' },
        '429': { description: 'Too many deliveries from this address' },
      },
    },
  };
}
