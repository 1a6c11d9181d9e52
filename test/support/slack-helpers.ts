import { createHmac } from 'node:crypto';
import type { TestApp } from './test-app.js';

export const SIGNING_SECRET = 'slack-signing-secret-0123456789abcdef';

/** Signs a body as Slack does (v0), at `ts` unix seconds. */
export function slackHeaders(body: string, ts: number, secret = SIGNING_SECRET): Record<string, string> {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
  return { 'content-type': 'application/json', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': signature };
}

/** POSTs a body to the Slack platform endpoint, signed now unless headers are given. */
export function postSlack(t: TestApp, body: string | Record<string, unknown>, headers?: Record<string, string>) {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return t.app.inject({
    method: 'POST',
    url: '/webhooks/inbound/slack',
    payload,
    headers: headers ?? slackHeaders(payload, Math.floor(t.clock.nowMs() / 1000)),
  });
}

/** An `event_callback` envelope as Slack's Events API documents it. */
export function envelope(teamId: string, eventId: string, event: Record<string, unknown>): Record<string, unknown> {
  return {
    token: 'legacy-verification-token',
    team_id: teamId,
    api_app_id: 'A0APP',
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: 1_793_491_200,
    authorizations: [{ enterprise_id: null, team_id: teamId, user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
    event_context: `4-${eventId}`,
  };
}

/** A plain channel message (Slack's `message` event, no subtype). */
export function message(fields: {
  text: string;
  user?: string;
  channel?: string;
  ts: string;
  thread_ts?: string;
  channel_type?: string;
}): Record<string, unknown> {
  return {
    client_msg_id: `c-${fields.ts}`,
    type: 'message',
    text: fields.text,
    user: fields.user ?? 'U0HUMAN',
    ts: fields.ts,
    blocks: [
      { type: 'rich_text', block_id: 'b1', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: fields.text }] }] },
    ],
    team: 'T0MAIN',
    channel: fields.channel ?? 'C0GENERAL',
    event_ts: fields.ts,
    channel_type: fields.channel_type ?? 'channel',
    ...(fields.thread_ts ? { thread_ts: fields.thread_ts, parent_user_id: 'U0BOT' } : {}),
  };
}
