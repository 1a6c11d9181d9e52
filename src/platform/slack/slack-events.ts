import type { FastifyReply } from 'fastify';
import { AppError } from '../../errors/app-error.js';
import { isPlainObject } from '../../lib/json.js';
import { isBotThread, recordBotThread } from '../../store/bot-thread-repository.js';
import type { PlatformContext } from '../platform-context.js';
import type { ResolvedInstallation } from '../platform-directory.js';
import type { PlatformDelivery, PlatformEndpoint } from '../platform-routes.js';
import { startPlatformRuns } from '../platform-start.js';
import { isMentioned, isOwnBot, matchesAppEvent, readSlackEvent, type SlackPayload } from './slack-event.js';
import { verifySlack } from './verify-slack.js';
import { parseJsonBody } from '../../webhooks/parse-json-body.js';

/** Slack's event envelopes are small (a message is a few KB); 1 MiB leaves room for any block layout. */
export const SLACK_MAX_BODY_BYTES = 1024 * 1024;

const OK_BODY = '';

/**
 * `POST {base_url}/webhooks/inbound/slack`: the Events API endpoint of the operator's Slack app.
 * Order: the signature on the raw bytes (401 and nothing parsed otherwise), then the JSON, the
 * URL challenge, the team's installation, the loop guard, and the start of the matching
 * workflows with the event id recorded in the same commit. Every verified delivery is answered
 * 200 once that commit is done, whether it started something or not (an unknown team, a
 * duplicate, the bot's own message): Slack retries anything else, and a difference would tell
 * the sender which teams are installed. Slack waits 3 s; the path holds one commit.
 */
export function slackEventsEndpoint(ctx: PlatformContext): PlatformEndpoint {
  return {
    provider: 'slack',
    path: '/slack',
    maxBodyBytes: SLACK_MAX_BODY_BYTES,
    openapi: SLACK_EVENTS_PATH_ITEM,
    handle: (delivery, reply) => handleSlackEvent(ctx, delivery, reply),
  };
}

async function handleSlackEvent(ctx: PlatformContext, delivery: PlatformDelivery, reply: FastifyReply): Promise<FastifyReply> {
  const app = await ctx.directory.app('slack');
  const verified = verifySlack(app?.secrets.signing_secret, delivery.rawHeaders, delivery.body, ctx.clock.nowMs());
  if (!verified.ok) {
    delivery.log.info({ provider: 'slack', reason: verified.reason }, 'platform delivery not authenticated');
    throw new AppError('unauthorized', 'the delivery is not authenticated');
  }
  // The webhook steps' parser: JSON nested deeper than can be stored is a 400, not a 500 that
  // Slack would retry.
  const parsed = parseJsonBody(delivery.body.toString('utf8'));
  if (!parsed.ok) throw new AppError('invalid_body', `the body is not JSON that can be stored: ${parsed.detail}`);
  const envelope = parsed.value;
  if (!isPlainObject(envelope)) throw new AppError('invalid_body', 'the body is not a JSON object');
  if (envelope.type === 'url_verification') {
    if (typeof envelope.challenge !== 'string') throw new AppError('invalid_body', 'url_verification carries no challenge');
    return reply
      .code(200)
      .type('application/json')
      .send(JSON.stringify({ challenge: envelope.challenge }));
  }
  const retry = delivery.headers['x-slack-retry-num'];
  const log = delivery.log.child({ provider: 'slack', event_id: envelope.event_id, ...(retry ? { retry_num: retry } : {}) });
  if (
    envelope.type !== 'event_callback' ||
    !isPlainObject(envelope.event) ||
    typeof envelope.team_id !== 'string' ||
    typeof envelope.event_id !== 'string'
  ) {
    // app_rate_limited and other envelopes: acknowledged, nothing to start.
    log.info({ type: envelope.type }, 'slack delivery without an event to route');
    ctx.metrics?.platformEvent('slack', 'ignored');
    return ok(reply);
  }
  const installation = await ctx.directory.installation('slack', envelope.team_id);
  if (!installation) {
    log.info({ team_id: envelope.team_id }, 'slack event for a team no workspace installed: dropped');
    ctx.metrics?.platformEvent('slack', 'unknown_account');
    return ok(reply);
  }
  const outcome = await routeEvent(ctx, installation, envelope.event_id, envelope.event, log);
  ctx.metrics?.platformEvent('slack', outcome);
  return ok(reply);
}

function ok(reply: FastifyReply): FastifyReply {
  return reply.code(200).type('text/plain; charset=utf-8').send(OK_BODY);
}

async function routeEvent(
  ctx: PlatformContext,
  installation: ResolvedInstallation,
  eventId: string,
  event: Record<string, unknown>,
  log: PlatformDelivery['log'],
): Promise<'started' | 'duplicate' | 'no_match' | 'ignored'> {
  // Fail closed: without the bot's identity its own messages could not be told apart, and a
  // workflow answering in the channel would trigger itself forever.
  if (!installation.botUserId || !installation.botId) {
    log.warn(
      { installation_id: installation.id },
      'slack installation without a bot user id and bot id: its events are dropped until it is installed again',
    );
    return 'ignored';
  }
  const facts = readSlackEvent(event);
  if (isOwnBot(facts, { userId: installation.botUserId, botId: installation.botId })) {
    // The bot's own post starts nothing, but its thread is now one the bot takes part in.
    if (facts.isNewMessage && facts.channel && facts.ts) {
      await recordBotThread(ctx.db, {
        installation_id: installation.id,
        channel: facts.channel,
        thread_ts: facts.threadTs ?? facts.ts,
        created_at: ctx.clock.now(),
      });
    }
    return 'ignored';
  }
  const payload: SlackPayload = {
    text: facts.text,
    user: facts.user,
    channel: facts.channel,
    channel_type: facts.channelType,
    ts: facts.ts,
    thread_ts: facts.threadTs,
    mentioned: isMentioned(facts, installation.botUserId),
    bot_thread:
      facts.threadTs !== null && facts.channel !== null && (await isBotThread(ctx.db, installation.id, facts.channel, facts.threadTs)),
    event_id: eventId,
    event_type: facts.eventType,
    team_id: installation.accountId,
  };
  const triggers = (await ctx.triggers.list(installation.workspaceId, 'app_event')).filter((trigger) =>
    matchesAppEvent(trigger.config, facts, payload),
  );
  const result = await startPlatformRuns(ctx, {
    provider: 'slack',
    workspaceId: installation.workspaceId,
    eventKey: `${installation.accountId}:${eventId}`,
    // A human's mention arrives twice (`message` and `app_mention`, two event ids): one run per workflow.
    ...(facts.isNewMessage && facts.channel && facts.ts ? { workflowKey: `${installation.accountId}:${facts.channel}:${facts.ts}` } : {}),
    triggers,
    trigger: { payload, event },
  });
  if (result.outcome === 'started')
    log.info({ workspace_id: installation.workspaceId, executions: result.executionIds.length }, 'slack event started executions');
  return result.outcome;
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/vnd.api+json': { schema: { $ref: '#/components/schemas/WebhookError' } } },
});

const SLACK_EVENTS_PATH_ITEM = {
  post: {
    tags: ['Platform endpoints'],
    summary: "Slack Events API deliveries of the operator's Slack app",
    description:
      "The Request URL of the Slack app's Event Subscriptions. Verified before anything is parsed: `X-Slack-Signature` (`v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the app's signing secret) and `X-Slack-Request-Timestamp` within 300 s of now. Answers the `url_verification` challenge; routes `event_callback` by `team_id` to the installing workspace and starts every active workflow whose `app_event` trigger matches, deduplicated by `event_id`. Every verified delivery is answered 200, also for an unknown team (dropped).",
    security: [],
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
    responses: {
      200: {
        description: 'accepted (or dropped); for url_verification `{challenge}`',
        content: {
          'application/json': { schema: { type: 'object', properties: { challenge: { type: 'string' } } } },
          'text/plain': { schema: { type: 'string' } },
        },
      },
      400: errorResponse('a verified body that is not a JSON object'),
      401: errorResponse('the signature or timestamp does not verify; nothing is parsed or run'),
      413: errorResponse('the body is over 1 MiB'),
      429: errorResponse('over SWITCHYARD_WEBHOOK_RATE_LIMIT deliveries a minute from this address; see Retry-After'),
      503: errorResponse('the engine had no room; Slack retries'),
    },
  },
};
