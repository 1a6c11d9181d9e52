import type { FastifyReply } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import { DEFAULT_SMS_REPLY_TIMEOUT_MS } from '../../steps/sms/index.js';
import type { PlatformContext } from '../platform-context.js';
import type { PlatformDelivery, PlatformEndpoint } from '../platform-routes.js';
import { startPlatformRuns } from '../platform-start.js';
import type { LiveTrigger } from '../platform-triggers.js';
import { ReplyWaiter } from './reply-waiter.js';
import { EMPTY_TWIML, messageTwiml, replyTextOf } from './twiml.js';
import { parseFormParams, verifyTwilioSignature, type FormParams } from './twilio-signature.js';

/** Twilio's webhook bodies are a few KiB (1600 characters of text, ten media URLs). */
export const TWILIO_MAX_BODY_BYTES = 64 * 1024;

/** Verifies nothing, so the work of an unknown account matches that of a known one. */
const UNKNOWN_ACCOUNT_TOKEN = 'switchyard-unknown-twilio-account';

const first = (params: FormParams, name: string): string => params.get(name)?.[0] ?? '';

/**
 * `POST {base_url}/webhooks/inbound/twilio`: Twilio's "A message comes in" webhook. Twilio signs
 * the parameters, not the raw body, so the form is parsed first; nothing else happens before the
 * signature is checked with the auth token of the installation named by `AccountSid`. An unknown
 * account and a bad signature get the same 401 (and the same HMAC work), so the endpoint does not
 * tell which accounts are installed. Answered with TwiML.
 */
export function twilioEndpoint(ctx: PlatformContext): PlatformEndpoint {
  return {
    provider: 'twilio',
    path: '/twilio',
    maxBodyBytes: TWILIO_MAX_BODY_BYTES,
    openapi: OPENAPI,
    handle: (delivery, reply) => handleTwilio(ctx, delivery, reply),
  };
}

async function handleTwilio(ctx: PlatformContext, delivery: PlatformDelivery, reply: FastifyReply): Promise<FastifyReply> {
  const type = String(delivery.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const params = type === 'application/x-www-form-urlencoded' ? parseFormParams(delivery.body) : new Map<string, string[]>();
  const accountSid = first(params, 'AccountSid');
  const installation = accountSid === '' ? null : await ctx.directory.installation('twilio', accountSid);
  const token = installation?.credentials.auth_token;
  const signature = delivery.headers['x-twilio-signature'];
  const valid = verifyTwilioSignature(
    token ?? UNKNOWN_ACCOUNT_TOKEN,
    ctx.baseUrl + delivery.url,
    params,
    typeof signature === 'string' ? signature : undefined,
  );
  if (!valid || !token || !installation) {
    delivery.log.info(
      { provider: 'twilio', reason: !token ? 'unknown account or no auth token' : 'bad signature' },
      'platform delivery not authenticated',
    );
    throw new AppError('unauthorized', 'the delivery is not authenticated');
  }

  const messageId = first(params, 'MessageSid') || first(params, 'SmsSid');
  const twiml = (xml: string) => reply.code(200).type('text/xml; charset=utf-8').send(xml);
  if (messageId === '') {
    ctx.metrics?.platformEvent('twilio', 'ignored');
    return twiml(EMPTY_TWIML);
  }
  const to = first(params, 'To');
  const all = await ctx.triggers.list(installation.workspaceId, 'sms');
  const matching = all.filter((trigger) => matches(trigger, to));
  const waiter = new ReplyWaiter();
  const result = await startPlatformRuns(ctx, {
    provider: 'twilio',
    workspaceId: installation.workspaceId,
    eventKey: messageId,
    triggers: matching,
    trigger: {
      payload: payloadOf(params, accountSid, messageId),
      event: Object.fromEntries([...params].map(([name, values]) => [name, values.length === 1 ? values[0] : values])),
    },
    observe: waiter.observe,
  });
  ctx.metrics?.platformEvent('twilio', result.outcome);
  if (result.outcome !== 'started') return twiml(EMPTY_TWIML);
  waiter.started(result.executionIds.length);
  reply.header('x-execution-id', result.executionIds.join(','));
  const timeoutMs = Math.max(
    ...matching.map((t) => (typeof t.config.reply_timeout_ms === 'number' ? t.config.reply_timeout_ms : DEFAULT_SMS_REPLY_TIMEOUT_MS)),
  );
  const response = await waiter.wait(timeoutMs);
  for (const id of result.executionIds) ctx.engine.unobserve(id);
  return twiml(messageTwiml(response === null ? null : replyTextOf(response)));
}

function matches(trigger: LiveTrigger, to: string): boolean {
  const numbers = trigger.config.numbers;
  return !Array.isArray(numbers) || numbers.length === 0 || numbers.includes(to);
}

function payloadOf(params: FormParams, accountId: string, messageId: string) {
  const count = Math.min(Number.parseInt(first(params, 'NumMedia') || '0', 10) || 0, 10);
  const media: { url: string; content_type: string | null }[] = [];
  for (let i = 0; i < count; i += 1) {
    const url = first(params, `MediaUrl${i}`);
    if (url !== '') media.push({ url, content_type: first(params, `MediaContentType${i}`) || null });
  }
  return {
    from: first(params, 'From'),
    to: first(params, 'To'),
    text: first(params, 'Body'),
    message_id: messageId,
    media,
    account_id: accountId,
  };
}

const OPENAPI = {
  post: {
    tags: ['Platform endpoints'],
    summary: 'Twilio inbound SMS (platform endpoint)',
    description:
      "Twilio's \"A message comes in\" webhook for every number of an installed account. Verified with `X-Twilio-Signature` (HMAC-SHA1 over SWITCHYARD_BASE_URL + path and the sorted parameters) using the installation's auth token; routed by `AccountSid`; deduplicated by `MessageSid`. Answers TwiML: an empty `<Response/>`, or the reply a respond step gave within the trigger's timeout.",
    security: [],
    parameters: [{ name: 'X-Twilio-Signature', in: 'header', required: true, schema: { type: 'string' } }],
    requestBody: {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } } },
    },
    responses: {
      '200': { description: 'TwiML', content: { 'text/xml': { schema: { type: 'string' } } } },
      '401': { description: 'Signature missing or wrong, or the account is not installed' },
      '413': { description: 'Body over the limit' },
      '429': { description: 'Too many deliveries from this address' },
    },
  },
} as const;
