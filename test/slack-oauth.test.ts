import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { startFakeSlack, type FakeSlack } from './support/fake-slack.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** Slack OAuth v2 install: our authorize route and callback, against a fake Slack. */
describeEachDialect('Slack OAuth install', (dialect) => {
  let t: TestApp;
  let slack: FakeSlack;
  beforeAll(async () => {
    slack = await startFakeSlack();
    t = await createTestApp(dialect, { slackApiUrl: slack.apiUrl });
  });
  afterAll(async () => {
    await t.close();
    await slack.close();
  });

  const authorize = (token = t.tokens.build) => t.request('POST', '/api/v1/app-installations/slack/authorize', { token });
  const callback = (query: string) => t.app.inject({ method: 'GET', url: `/webhooks/inbound/slack/oauth?${query}` });

  it('refuses to start before the operator set the client id and secret', async () => {
    const res = await authorize();
    expect(res.status).toBe(409);
    expect(res.body.errors[0].detail).toContain('switchyard app set slack --client-id');
  });

  it('answers the authorize URL with a state signed for the workspace; a read token cannot start it', async () => {
    await t.deps.apps.setApp('slack', {
      settings: { client_id: '123.456' },
      secrets: { client_secret: 'client-secret-0123', signing_secret: 'sign-0123' },
    });
    expect((await authorize(t.tokens.read)).status).toBe(403);
    const res = await authorize();
    expect(res.status).toBe(200);
    const url = new URL(res.body.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${new URL(slack.apiUrl).origin}/oauth/v2/authorize`);
    expect(url.searchParams.get('client_id')).toBe('123.456');
    expect(url.searchParams.get('redirect_uri')).toBe('http://sy.test/webhooks/inbound/slack/oauth');
    expect(url.searchParams.get('scope')).toContain('chat:write');
    expect(t.deps.slackOAuth.verifyState(url.searchParams.get('state')!)).toBe(t.workspaces.main);
  });

  it('exchanges the code, reads the bot id with auth.test, and stores the installation with the bot token sealed', async () => {
    const state = new URL((await authorize()).body.url).searchParams.get('state')!;
    const res = await callback(`code=code-123&state=${encodeURIComponent(state)}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('T0OAUTH');
    const exchange = slack.calls.find((c) => c.method === 'oauth.v2.access')!;
    expect(exchange.body).toEqual({ code: 'code-123', redirect_uri: 'http://sy.test/webhooks/inbound/slack/oauth' });
    expect(exchange.headers.authorization).toBe(`Basic ${Buffer.from('123.456:client-secret-0123').toString('base64')}`);
    expect(slack.calls.find((c) => c.method === 'auth.test')!.headers.authorization).toBe('Bearer xoxb-from-oauth');
    const installed = await t.deps.platformDirectory.installation('slack', 'T0OAUTH');
    expect(installed).toMatchObject({
      workspaceId: t.workspaces.main,
      botUserId: 'U0OAUTHBOT',
      botId: 'B0OAUTHBOT',
      credentials: { bot_token: 'xoxb-from-oauth' },
    });
    const row = await t.deps.db.selectFrom('app_installations').selectAll().where('account_id', '=', 'T0OAUTH').executeTakeFirstOrThrow();
    expect(row.credentials_sealed).not.toContain('xoxb');
    const listed = await t.request('GET', '/api/v1/app-installations');
    expect(listed.body.data.map((d: { attributes: { account_id: string } }) => d.attributes.account_id)).toContain('T0OAUTH');
  });

  it('stores an install whose auth.test names no bot id; its events are dropped until the bot identity is known', async () => {
    slack.script('oauth.v2.access', {
      body: {
        ok: true,
        access_token: 'xoxb-nobot',
        token_type: 'bot',
        bot_user_id: 'U0NOBOTID',
        team: { name: 'Partial', id: 'T0PARTIAL' },
      },
    });
    slack.script('auth.test', { body: { ok: true, team_id: 'T0PARTIAL', user_id: 'U0NOBOTID' } });
    const state = new URL((await authorize()).body.url).searchParams.get('state')!;
    const res = await callback(`code=code-partial&state=${encodeURIComponent(state)}`);
    expect(res.statusCode).toBe(200);
    expect(await t.deps.platformDirectory.installation('slack', 'T0PARTIAL')).toMatchObject({
      workspaceId: t.workspaces.main,
      botUserId: 'U0NOBOTID',
      botId: null,
    });
    // The operator's CLI install still requires both ids.
    await expect(
      t.deps.apps.install({
        provider: 'slack',
        workspace: { id: t.workspaces.main },
        accountId: 'T0CLI',
        botUserId: 'U0X',
        credentials: { bot_token: 'xoxb-cli' },
      }),
    ).rejects.toThrow('needs the bot user id and the bot id');
  });

  it('refuses a forged, altered or expired state before calling Slack', async () => {
    const calls = slack.calls.length;
    const state = new URL((await authorize()).body.url).searchParams.get('state')!;
    const [body, mac] = state.split('.');
    const forgedBody = Buffer.from(JSON.stringify({ w: t.workspaces.other, e: Date.parse('2099-01-01'), n: 'x' })).toString('base64url');
    for (const bad of [`${forgedBody}.${mac}`, `${body}.${'A'.repeat(43)}`, 'garbage', '']) {
      const res = await callback(`code=c&state=${encodeURIComponent(bad)}`);
      expect(res.statusCode, bad).toBe(400);
    }
    t.clock.advance(11 * 60 * 1000);
    const expired = await callback(`code=c&state=${encodeURIComponent(state)}`);
    expect(expired.statusCode).toBe(400);
    expect(expired.json().errors[0].detail).toContain('expired');
    expect(slack.calls.length).toBe(calls);
  });

  it('refuses a team another workspace already holds, and reports a denied install', async () => {
    {
      // The same team installed in the other workspace first.
      await t.deps.apps.install({
        provider: 'slack',
        workspace: { id: t.workspaces.other },
        accountId: 'T0TAKEN',
        botUserId: 'U1',
        botId: 'B1',
        credentials: { bot_token: 'xoxb-1' },
      });
      slack.script('oauth.v2.access', {
        body: { ok: true, access_token: 'xoxb-2', bot_user_id: 'U2', team: { id: 'T0TAKEN', name: 'Taken' } },
      });
      const state = new URL((await authorize()).body.url).searchParams.get('state')!;
      const res = await callback(`code=c2&state=${encodeURIComponent(state)}`);
      expect(res.statusCode).toBe(409);
      expect((await t.deps.platformDirectory.installation('slack', 'T0TAKEN'))?.workspaceId).toBe(t.workspaces.other);
      const denied = await callback(`error=access_denied&state=${encodeURIComponent(state)}`);
      expect(denied.statusCode).toBe(400);
      expect(denied.json().errors[0].detail).toContain('access_denied');
      slack.script('oauth.v2.access', { body: { ok: false, error: 'invalid_code' } });
      const refused = await callback(`code=bad&state=${encodeURIComponent(state)}`);
      expect(refused.statusCode).toBe(502);
    }
  });
});
