import { verifySlackRequest } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, node, workflowWith } from './support/engine-helpers.js';
import { envelope, message, postSlack, SIGNING_SECRET, slackHeaders } from './support/slack-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** Workflows by what their app_event trigger asks for; each tags its output with its name. */
const TRIGGERS: Record<string, Record<string, unknown>> = {
  all: {},
  bots: { include_bots: true, channels: ['C0BOTS'] },
  edits: { event_types: ['message_changed'], channels: ['C0EDIT'] },
  threads: { bot_threads_only: true },
  mentions: { only_mentioned: true },
};

describeEachDialect('Slack events at /webhooks/inbound/slack', (dialect) => {
  let t: TestApp;
  let seq = 0;
  const ts = () => `1793491${String(200 + (seq += 1)).padStart(3, '0')}.000${String(seq).padStart(3, '0')}`;
  const nowSeconds = () => Math.floor(t.clock.nowMs() / 1000);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.deps.apps.setApp('slack', { secrets: { signing_secret: SIGNING_SECRET } });
    await t.deps.apps.install({
      provider: 'slack',
      workspace: { id: t.workspaces.main },
      accountId: 'T0MAIN',
      botUserId: 'U0BOT',
      botId: 'B0BOT',
      credentials: { bot_token: 'xoxb-main' },
    });
    for (const [who, config] of Object.entries(TRIGGERS)) {
      await workflowWith(
        t,
        who,
        {
          nodes: [
            node('event', 'app_event', config),
            node('tag', 'set', { values: { who, payload: '{{ trigger.payload }}', event_type: '{{ trigger.event.type }}' } }),
          ],
          edges: [edge('event', 'tag')],
        },
        { activate: true },
      );
    }
  });
  afterAll(() => t.close());

  /** The finished runs whose payload text contains the marker: who ran, with which payload. */
  const runsFor = async (marker: string) => {
    await t.deps.engine.idle();
    const rows = await t.deps.db.selectFrom('executions').select('output').where('output', 'like', `%${marker}%`).execute();
    return rows
      .map((r) => JSON.parse(r.output!) as { who: string; payload: Record<string, unknown>; event_type: string })
      .sort((a, b) => a.who.localeCompare(b.who));
  };
  const executionCount = async () =>
    Number(
      (
        await t.deps.db
          .selectFrom('executions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  describe('verification', () => {
    it("signs exactly as Slack's own verifier (@slack/bolt) expects, and accepts what it accepts", async () => {
      for (const text of ['plain', 'ünïcödé ✓', 'quotes " and \\ backslashes']) {
        const body = JSON.stringify({ type: 'url_verification', challenge: text, token: 'x' });
        const headers = slackHeaders(body, nowSeconds());
        expect(() =>
          verifySlackRequest({
            signingSecret: SIGNING_SECRET,
            body,
            headers: {
              'x-slack-signature': headers['x-slack-signature']!,
              'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']),
            },
            nowMilliseconds: t.clock.nowMs(),
          }),
        ).not.toThrow();
        const res = await postSlack(t, body, headers);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ challenge: text });
      }
    });

    it('refuses with 401 what the oracle refuses: another secret, a changed body, a stale timestamp', async () => {
      const body = JSON.stringify({ type: 'url_verification', challenge: 'c' });
      const cases = [
        { name: 'wrong secret', body, headers: slackHeaders(body, nowSeconds(), 'another-secret') },
        { name: 'changed body', body: body.replace('"c"', '"d"'), headers: slackHeaders(body, nowSeconds()) },
        { name: 'stale', body, headers: slackHeaders(body, nowSeconds() - 301) },
      ];
      for (const c of cases) {
        expect(
          () =>
            verifySlackRequest({
              signingSecret: SIGNING_SECRET,
              body: c.body,
              headers: {
                'x-slack-signature': c.headers['x-slack-signature']!,
                'x-slack-request-timestamp': Number(c.headers['x-slack-request-timestamp']),
              },
              nowMilliseconds: t.clock.nowMs(),
            }),
          c.name,
        ).toThrow();
        const res = await postSlack(t, c.body, c.headers);
        expect(res.statusCode, c.name).toBe(401);
        expect(res.json().errors[0].code).toBe('unauthorized');
      }
    });

    it('refuses a timestamp 301 s in the future too, and accepts one 300 s away either way', async () => {
      const body = JSON.stringify({ type: 'url_verification', challenge: 'c' });
      expect((await postSlack(t, body, slackHeaders(body, nowSeconds() + 301))).statusCode).toBe(401);
      expect((await postSlack(t, body, slackHeaders(body, nowSeconds() + 300))).statusCode).toBe(200);
      expect((await postSlack(t, body, slackHeaders(body, nowSeconds() - 300))).statusCode).toBe(200);
    });

    it('refuses missing, repeated and malformed headers, and parses nothing before verifying', async () => {
      const before = await executionCount();
      const body = JSON.stringify(envelope('T0MAIN', 'EvForged', message({ text: 'forged-marker', ts: ts() })));
      const good = slackHeaders(body, nowSeconds());
      const variants: Record<string, string>[] = [
        { 'content-type': 'application/json' },
        { 'content-type': 'application/json', 'x-slack-signature': good['x-slack-signature']! },
        { 'content-type': 'application/json', 'x-slack-request-timestamp': good['x-slack-request-timestamp']! },
        { ...good, 'x-slack-signature': good['x-slack-signature']!.replace('v0=', 'v1=') },
        { ...good, 'x-slack-signature': 'v0=zz' },
        { ...good, 'x-slack-request-timestamp': 'soon' },
      ];
      for (const headers of variants) expect((await postSlack(t, body, headers)).statusCode).toBe(401);
      // A repeated signature header, the second one valid.
      const repeated = await t.app.inject({
        method: 'POST',
        url: '/webhooks/inbound/slack',
        payload: body,
        headers: { ...good, 'x-slack-signature': ['v0=' + '0'.repeat(64), good['x-slack-signature']!] } as never,
      });
      expect(repeated.statusCode).toBe(401);
      // Not JSON at all: refused for the signature (401), not for the body (400).
      const garbage = await postSlack(t, '{not json', { ...good });
      expect(garbage.statusCode).toBe(401);
      // The url_verification challenge is not answered without a signature.
      const challenge = await postSlack(t, JSON.stringify({ type: 'url_verification', challenge: 'leak' }), {
        'content-type': 'application/json',
      });
      expect(challenge.statusCode).toBe(401);
      expect(challenge.body).not.toContain('leak');
      expect(await executionCount()).toBe(before);
      expect(await runsFor('forged-marker')).toEqual([]);
    });

    it('refuses everything while the app has no signing secret (fail closed)', async () => {
      await t.deps.db.updateTable('provider_apps').set({ secrets_sealed: null }).where('provider', '=', 'slack').execute();
      const body = JSON.stringify({ type: 'url_verification', challenge: 'c' });
      expect((await postSlack(t, body)).statusCode).toBe(401);
      await t.deps.apps.setApp('slack', { secrets: { signing_secret: SIGNING_SECRET } });
      expect((await postSlack(t, body)).statusCode).toBe(200);
    });

    it('answers 400 for a verified body that is not JSON', async () => {
      const res = await postSlack(t, 'not json');
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0].code).toBe('invalid_body');
    });

    it('answers 400, not 500, for a verified event nested 100,000 levels deep', async () => {
      const deep = `{"type":"event_callback","event":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      const res = await postSlack(t, deep);
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0]).toMatchObject({ code: 'invalid_body', detail: expect.stringMatching(/deeper than 512 levels/) });
    });
  });

  describe('routing', () => {
    it('starts the matching workflows with the normalized payload and the raw event (a channel message)', async () => {
      const at = ts();
      const event = message({ text: 'hello-marker from a human', ts: at });
      const res = await postSlack(t, envelope('T0MAIN', 'EvHello', event));
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('');
      const runs = await runsFor('hello-marker');
      expect(runs.map((r) => r.who)).toEqual(['all']);
      expect(runs[0]!.payload).toEqual({
        text: 'hello-marker from a human',
        user: 'U0HUMAN',
        channel: 'C0GENERAL',
        channel_type: 'channel',
        ts: at,
        thread_ts: null,
        mentioned: false,
        bot_thread: false,
        event_id: 'EvHello',
        event_type: 'message',
        team_id: 'T0MAIN',
      });
      expect(runs[0]!.event_type).toBe('message');
    });

    it('starts each workflow once for a mention Slack delivers as both message and app_mention', async () => {
      const at = ts();
      const text = '<@U0BOT> mention-marker please';
      const asMessage = message({ text, ts: at });
      const asMention = {
        type: 'app_mention',
        user: 'U0HUMAN',
        text,
        ts: at,
        channel: 'C0GENERAL',
        event_ts: at,
        client_msg_id: 'c-m',
        team: 'T0MAIN',
      };
      const [a, b] = await Promise.all([
        postSlack(t, envelope('T0MAIN', 'EvMentionMsg', asMessage)),
        postSlack(t, envelope('T0MAIN', 'EvMentionApp', asMention)),
      ]);
      expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
      const runs = await runsFor('mention-marker');
      expect(runs.map((r) => r.who)).toEqual(['all', 'mentions']);
      expect(runs.every((r) => r.payload.mentioned === true)).toBe(true);
    });

    it('marks a direct message as mentioned', async () => {
      await postSlack(t, envelope('T0MAIN', 'EvDm', message({ text: 'dm-marker', ts: ts(), channel: 'D0DIRECT', channel_type: 'im' })));
      const runs = await runsFor('dm-marker');
      expect(runs.map((r) => r.who)).toEqual(['all', 'mentions']);
      expect(runs[0]!.payload).toMatchObject({ channel_type: 'im', mentioned: true });
    });

    it("drops the bot's own messages, records their threads, and marks replies there as bot_thread", async () => {
      const root = ts();
      const before = await executionCount();
      const own = {
        ...message({ text: 'own-marker posted by the bot', ts: root, user: 'U0BOT' }),
        bot_id: 'B0BOT',
        app_id: 'A0APP',
        bot_profile: { id: 'B0BOT', name: 'switchyard' },
      };
      expect((await postSlack(t, envelope('T0MAIN', 'EvOwn', own))).statusCode).toBe(200);
      // By bot id alone too (a bot_message without a user).
      const ownByBotId = {
        type: 'message',
        subtype: 'bot_message',
        text: 'own-marker again',
        bot_id: 'B0BOT',
        ts: ts(),
        channel: 'C0GENERAL',
        channel_type: 'channel',
        event_ts: root,
      };
      expect((await postSlack(t, envelope('T0MAIN', 'EvOwn2', ownByBotId))).statusCode).toBe(200);
      await t.deps.engine.idle();
      expect(await executionCount()).toBe(before);
      const reply = message({ text: 'reply-marker in the bot thread', ts: ts(), thread_ts: root });
      await postSlack(t, envelope('T0MAIN', 'EvReply', reply));
      const runs = await runsFor('reply-marker');
      expect(runs.map((r) => r.who)).toEqual(['all', 'threads']);
      expect(runs[0]!.payload).toMatchObject({ thread_ts: root, bot_thread: true });
      // A reply in a thread the bot never posted in is not one.
      await postSlack(
        t,
        envelope('T0MAIN', 'EvOtherThread', message({ text: 'elsewhere-marker', ts: ts(), thread_ts: '1700000000.000100' })),
      );
      const other = await runsFor('elsewhere-marker');
      expect(other.map((r) => r.who)).toEqual(['all']);
      expect(other[0]!.payload).toMatchObject({ thread_ts: '1700000000.000100', bot_thread: false });
    });

    it("lets other bots' messages reach only triggers with include_bots", async () => {
      const botMessage = {
        type: 'message',
        subtype: 'bot_message',
        text: 'otherbot-marker',
        bot_id: 'B0OTHER',
        username: 'ci',
        ts: ts(),
        channel: 'C0BOTS',
        channel_type: 'channel',
        event_ts: '1',
      };
      await postSlack(t, envelope('T0MAIN', 'EvOtherBot', botMessage));
      const runs = await runsFor('otherbot-marker');
      expect(runs.map((r) => r.who)).toEqual(['bots']);
      expect(runs[0]!.payload).toMatchObject({ user: null, event_type: 'message' });
    });

    it('routes an edit (message_changed) only to triggers that list it, with the edited message as payload', async () => {
      const original = ts();
      const edit = {
        type: 'message',
        subtype: 'message_changed',
        hidden: true,
        message: { type: 'message', user: 'U0HUMAN', text: 'edited-marker now', edited: { user: 'U0HUMAN', ts: ts() }, ts: original },
        channel: 'C0EDIT',
        previous_message: { type: 'message', user: 'U0HUMAN', text: 'before', ts: original },
        event_ts: ts(),
        ts: ts(),
        channel_type: 'channel',
      };
      await postSlack(t, envelope('T0MAIN', 'EvEdit', edit));
      const runs = await runsFor('edited-marker');
      expect(runs.map((r) => r.who)).toEqual(['edits']);
      expect(runs[0]!.payload).toMatchObject({
        text: 'edited-marker now',
        user: 'U0HUMAN',
        ts: original,
        event_type: 'message_changed',
        channel: 'C0EDIT',
      });
    });

    it('answers a redelivery (X-Slack-Retry-Num) 200 and starts nothing again', async () => {
      const body = JSON.stringify(envelope('T0MAIN', 'EvRetry', message({ text: 'retry-marker', ts: ts() })));
      expect((await postSlack(t, body)).statusCode).toBe(200);
      for (const n of ['1', '2']) {
        const res = await postSlack(t, body, {
          ...slackHeaders(body, nowSeconds()),
          'x-slack-retry-num': n,
          'x-slack-retry-reason': 'http_timeout',
        });
        expect(res.statusCode).toBe(200);
      }
      expect((await runsFor('retry-marker')).map((r) => r.who)).toEqual(['all']);
    });

    it('gives 50 concurrent copies of one event one execution, all answered 200', async () => {
      const body = JSON.stringify(envelope('T0MAIN', 'EvFifty', message({ text: 'fifty-marker', ts: ts() })));
      const headers = slackHeaders(body, nowSeconds());
      const answers = await Promise.all(Array.from({ length: 50 }, () => postSlack(t, body, headers)));
      expect(answers.map((a) => a.statusCode)).toEqual(Array(50).fill(200));
      expect((await runsFor('fifty-marker')).map((r) => r.who)).toEqual(['all']);
    });

    it('answers an unknown team 200, starts nothing and counts it', async () => {
      const before = await executionCount();
      const res = await postSlack(t, envelope('T0UNKNOWN', 'EvUnknown', message({ text: 'unknown-marker', ts: ts() })));
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('');
      await t.deps.engine.idle();
      expect(await executionCount()).toBe(before);
      expect(await t.deps.metrics.render()).toMatch(/switchyard_platform_events_total\{provider="slack",outcome="unknown_account"\} [1-9]/);
    });

    it('drops every event of an installation whose bot identity is unknown (fail closed)', async () => {
      const now = t.clock.now();
      await t.deps.db
        .insertInto('app_installations')
        .values({
          id: '0190f2a0-0000-7000-8000-00000000b0b0',
          workspace_id: t.workspaces.main,
          provider: 'slack',
          account_id: 'T0NOBOT',
          bot_user_id: null,
          bot_id: null,
          credentials_sealed: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const res = await postSlack(t, envelope('T0NOBOT', 'EvNoBot', message({ text: 'nobot-marker', ts: ts() })));
      expect(res.statusCode).toBe(200);
      expect(await runsFor('nobot-marker')).toEqual([]);
    });

    it('stops routing a team once its installation is removed', async () => {
      const other = await t.deps.apps.install({
        provider: 'slack',
        workspace: { id: t.workspaces.other },
        accountId: 'T0GONE',
        botUserId: 'U0B',
        botId: 'B0B',
        credentials: { bot_token: 'xoxb-gone' },
      });
      await workflowWith(
        { ...t, request: (m, u, o) => t.request(m, u, { ...o, token: t.tokens.other }) },
        'other',
        {
          nodes: [node('event', 'app_event'), node('tag', 'set', { values: { who: 'other', payload: '{{ trigger.payload }}' } })],
          edges: [edge('event', 'tag')],
        },
        { activate: true },
      );
      await postSlack(t, envelope('T0GONE', 'EvGone1', message({ text: 'gone-marker one', ts: ts() })));
      expect((await runsFor('gone-marker one')).map((r) => r.who)).toEqual(['other']);
      expect((await t.request('DELETE', `/api/v1/app-installations/${other.id}`, { token: t.tokens.other })).status).toBe(204);
      expect((await postSlack(t, envelope('T0GONE', 'EvGone2', message({ text: 'gone-marker two', ts: ts() })))).statusCode).toBe(200);
      expect(await runsFor('gone-marker two')).toEqual([]);
    });
  });
});
