import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, node, stepRows, workflowWith } from './support/engine-helpers.js';
import { startFakeSlack, type FakeSlack } from './support/fake-slack.js';
import { envelope, message, postSlack, SIGNING_SECRET } from './support/slack-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** chat_reply against a fake Slack Web API (SWITCHYARD_SLACK_API_URL), and the loop it must not start. */
describeEachDialect('chat_reply', (dialect) => {
  let t: TestApp;
  let slack: FakeSlack;
  let seq = 0;
  const ts = () => `1793492${String(100 + (seq += 1))}.000${String(seq).padStart(3, '0')}`;

  beforeAll(async () => {
    slack = await startFakeSlack();
    t = await createTestApp(dialect, { slackApiUrl: slack.apiUrl });
    await t.deps.apps.setApp('slack', { secrets: { signing_secret: SIGNING_SECRET } });
    await t.deps.apps.install({
      provider: 'slack',
      workspace: { id: t.workspaces.main },
      accountId: 'T0MAIN',
      botUserId: 'U0BOT',
      botId: 'B0BOT',
      credentials: { bot_token: 'xoxb-main-token' },
    });
    await workflowWith(
      t,
      'echo',
      {
        nodes: [
          node('event', 'app_event', { channels: ['C0ECHO'] }),
          node(
            'reply',
            'chat_reply',
            {
              channel: '{{ trigger.payload.channel }}',
              text: 'echo: {{ trigger.payload.text }}',
              thread_ts: '{{ trigger.payload.thread_ts ? trigger.payload.thread_ts : trigger.payload.ts }}',
            },
            { retry: { max_attempts: 3, backoff_ms: 1000, backoff: 'fixed' } },
          ),
        ],
        edges: [edge('event', 'reply')],
      },
      { activate: true },
    );
  });
  afterAll(async () => {
    await t.close();
    await slack.close();
  });

  const lastExecution = async () =>
    t.deps.db.selectFrom('executions').selectAll().orderBy('inserted_at', 'desc').orderBy('id', 'desc').executeTakeFirstOrThrow();
  const executionCount = async () =>
    Number(
      (
        await t.deps.db
          .selectFrom('executions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it("posts in the thread with the installation's bot token, records the thread, and the echo starts nothing", async () => {
    const root = ts();
    await postSlack(t, envelope('T0MAIN', 'EvEcho1', message({ text: 'hi bot', ts: root, channel: 'C0ECHO' })));
    await t.deps.engine.idle();
    const execution = await lastExecution();
    expect(execution.status).toBe('completed');
    const post = slack.calls.filter((c) => c.method === 'chat.postMessage').at(-1)!;
    expect(post.headers.authorization).toBe('Bearer xoxb-main-token');
    expect(post.body).toEqual({ channel: 'C0ECHO', text: 'echo: hi bot', thread_ts: root });
    const reply = (await stepRows(t, execution.id)).find((s) => s.node_id === 'reply')!;
    const output = reply.output;
    expect(output).toMatchObject({ channel: 'C0ECHO', thread_ts: root, team_id: 'T0MAIN' });
    const thread = await t.deps.db
      .selectFrom('bot_threads')
      .selectAll()
      .where('channel', '=', 'C0ECHO')
      .where('thread_ts', '=', root)
      .executeTakeFirst();
    expect(thread).toBeDefined();

    // Slack delivers the bot's own reply as an event: the loop guard drops it.
    const before = await executionCount();
    const echo = {
      ...message({ text: 'echo: hi bot', ts: output.ts, thread_ts: root, channel: 'C0ECHO', user: 'U0BOT' }),
      bot_id: 'B0BOT',
    };
    expect((await postSlack(t, envelope('T0MAIN', 'EvEcho2', echo))).statusCode).toBe(200);
    await t.deps.engine.idle();
    expect(await executionCount()).toBe(before);
    // A human reply in that thread is marked bot_thread and answered in the same thread.
    await postSlack(t, envelope('T0MAIN', 'EvEcho3', message({ text: 'thanks', ts: ts(), thread_ts: root, channel: 'C0ECHO' })));
    await t.deps.engine.idle();
    const next = await lastExecution();
    const trigger = (await stepRows(t, next.id)).find((s) => s.node_id === 'event')!.output;
    expect(trigger.payload).toMatchObject({ bot_thread: true, thread_ts: root });
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage').at(-1)!.body).toEqual({
      channel: 'C0ECHO',
      text: 'echo: thanks',
      thread_ts: root,
    });
  });

  it("fails without retries when Slack refuses (channel_not_found), with Slack's error in the details", async () => {
    slack.script('chat.postMessage', { body: { ok: false, error: 'channel_not_found' } });
    await postSlack(t, envelope('T0MAIN', 'EvGone', message({ text: 'to nowhere', ts: ts(), channel: 'C0ECHO' })));
    await t.deps.engine.idle();
    const execution = await lastExecution();
    expect(execution.status).toBe('failed');
    const error = (await stepRows(t, execution.id)).find((s) => s.node_id === 'reply')!.error;
    expect(error).toMatchObject({
      code: 'provider_error',
      retryable: false,
      details: { slack_error: 'channel_not_found', provider: 'slack' },
    });
  });

  it("waits for Slack's Retry-After on a rate limit, then posts", async () => {
    slack.script('chat.postMessage', { status: 429, headers: { 'retry-after': '7' }, body: { ok: false, error: 'ratelimited' } });
    await postSlack(t, envelope('T0MAIN', 'EvLimited', message({ text: 'limited', ts: ts(), channel: 'C0ECHO' })));
    await t.deps.engine.idle();
    const waiting = await lastExecution();
    expect(waiting.status).toBe('waiting');
    const firstTry = (await stepRows(t, waiting.id)).filter((s) => s.node_id === 'reply');
    expect(firstTry[0]!.error).toMatchObject({ code: 'rate_limited', retryable: true, retry_after_ms: 7000 });
    t.clock.advance(7_000);
    await t.deps.engine.runDue();
    await t.deps.engine.idle();
    expect((await t.deps.db.selectFrom('executions').select('status').where('id', '=', waiting.id).executeTakeFirstOrThrow()).status).toBe(
      'completed',
    );
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage').at(-1)!.body).toMatchObject({ text: 'echo: limited' });
  });

  it('fails clearly when the workspace has no installation of the team', async () => {
    const other = await workflowWith(
      t,
      'direct',
      {
        nodes: [
          node('hook', 'webhook', { verification: { method: 'none' } }),
          node('reply', 'chat_reply', { channel: 'C1', text: 'hi', team_id: 'T0NOTHERE' }),
        ],
        edges: [edge('hook', 'reply')],
      },
      { activate: true },
    );
    const run = await t.request('POST', `/api/v1/workflows/${other}/run`, { body: { data: { draft: true, input: {} } } });
    expect(run.status).toBe(202);
    await t.deps.engine.idle();
    const error = (await stepRows(t, run.body.execution_id)).find((s) => s.node_id === 'reply')!.error;
    expect(error).toMatchObject({
      code: 'installation_not_found',
      message: 'chat_reply cannot post: the Slack team T0NOTHERE is not installed in this workspace',
    });
  });
});
