import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetentionPruner } from '../src/engine/retention.js';
import { startPlatformRuns } from '../src/platform/platform-start.js';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** Provider apps, installations (/app-installations) and the shared start of platform runs. */
describeEachDialect('provider apps and installations', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  const install = (accountId: string, workspaceId = t.workspaces.main) =>
    t.deps.apps.install({
      provider: 'slack',
      workspace: { id: workspaceId },
      accountId,
      botUserId: 'U0BOT',
      botId: 'B0BOT',
      credentials: { bot_token: `xoxb-${accountId}-secret` },
    });

  describe('provider apps', () => {
    it('seals the secrets and lists only their names', async () => {
      const app = await t.deps.apps.setApp('slack', {
        settings: { client_id: '111.222' },
        secrets: { signing_secret: 'sign-me-0123', client_secret: 'client-secret-0123' },
      });
      expect(app).toMatchObject({
        provider: 'slack',
        settings: { client_id: '111.222' },
        secrets_set: ['client_secret', 'signing_secret'],
      });
      const row = await t.deps.db.selectFrom('provider_apps').selectAll().where('provider', '=', 'slack').executeTakeFirstOrThrow();
      expect(row.secrets_sealed).not.toContain('sign-me');
      expect(JSON.stringify(await t.deps.apps.listApps())).not.toContain('sign-me');
      expect((await t.deps.apps.openApp('slack'))?.secrets).toEqual({
        signing_secret: 'sign-me-0123',
        client_secret: 'client-secret-0123',
      });
    });

    it('replaces the secrets given and keeps the others', async () => {
      await t.deps.apps.setApp('slack', { secrets: { signing_secret: 'rotated-0123' } });
      expect((await t.deps.apps.openApp('slack'))?.secrets).toEqual({
        signing_secret: 'rotated-0123',
        client_secret: 'client-secret-0123',
      });
      expect((await t.deps.platformDirectory.app('slack'))?.secrets.signing_secret).toBe('rotated-0123');
    });

    it('refuses a secret the provider does not have, and an unknown provider', async () => {
      await expect(t.deps.apps.setApp('slack', { secrets: { signing_key: 'x' } })).rejects.toThrow(
        'signing_key is not a secret of the slack app (signing_secret, client_secret)',
      );
      await expect(t.deps.apps.setApp('discord', {})).rejects.toThrow(
        'provider must be one of slack, twilio, mailgun, postmark, not "discord"',
      );
    });
  });

  describe('installations', () => {
    it('links an account to one workspace only: another workspace is refused with 409, the same one reinstalls', async () => {
      const first = await install('T0ONE');
      await expect(install('T0ONE', t.workspaces.other)).rejects.toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('installed in another workspace'),
      });
      const again = await t.deps.apps.install({
        provider: 'slack',
        workspace: { id: t.workspaces.main },
        accountId: 'T0ONE',
        botUserId: 'U0NEW',
        botId: 'B0NEW',
        credentials: { bot_token: 'xoxb-new' },
      });
      expect(again.id).toBe(first.id);
      const resolved = await t.deps.platformDirectory.installation('slack', 'T0ONE');
      expect(resolved).toMatchObject({
        id: first.id,
        workspaceId: t.workspaces.main,
        botUserId: 'U0NEW',
        botId: 'B0NEW',
        credentials: { bot_token: 'xoxb-new' },
      });
    });

    it('requires the bot identity and the bot token of a Slack installation', async () => {
      await expect(
        t.deps.apps.install({
          provider: 'slack',
          workspace: { id: t.workspaces.main },
          accountId: 'T0NOBOT',
          credentials: { bot_token: 'xoxb-1' },
        }),
      ).rejects.toThrow('needs the bot user id and the bot id');
      await expect(
        t.deps.apps.install({
          provider: 'slack',
          workspace: { id: t.workspaces.main },
          accountId: 'T0NOTOKEN',
          botUserId: 'U1',
          botId: 'B1',
        }),
      ).rejects.toThrow('a slack installation needs bot_token');
    });

    it("lists the workspace's installations oldest first, paginated, never with a credential", async () => {
      await install('T0TWO');
      await install('T0THREE');
      await install('T0OTHER', t.workspaces.other);
      const page1 = await t.request('GET', '/api/v1/app-installations?page[limit]=2');
      expect(page1.status).toBe(200);
      expect(page1.body.data.map((d: { attributes: { account_id: string } }) => d.attributes.account_id)).toEqual(['T0ONE', 'T0TWO']);
      expect(page1.body.links.next).toBeTruthy();
      const page2 = await t.request('GET', page1.body.links.next.replace('http://sy.test', ''));
      expect(page2.body.data.map((d: { attributes: { account_id: string } }) => d.attributes.account_id)).toEqual(['T0THREE']);
      expect(page1.body.data[0]).toMatchObject({
        type: 'app-installation',
        attributes: { provider: 'slack', bot_user_id: 'U0NEW', bot_id: 'B0NEW' },
      });
      expect(page1.raw + page2.raw).not.toContain('xoxb');
      expect(page1.raw).not.toContain('credentials');
    });

    it("reads one and removes it; another workspace's id is 404 like an unknown one", async () => {
      const row = await t.deps.db.selectFrom('app_installations').selectAll().where('account_id', '=', 'T0TWO').executeTakeFirstOrThrow();
      const got = await t.request('GET', `/api/v1/app-installations/${row.id}`);
      expect(got.body.data).toMatchObject({ id: row.id, attributes: { account_id: 'T0TWO' } });
      expect((await t.request('GET', `/api/v1/app-installations/${row.id}`, { token: t.tokens.other })).status).toBe(404);
      expect((await t.request('DELETE', `/api/v1/app-installations/${row.id}`, { token: t.tokens.read })).status).toBe(403);
      expect((await t.request('DELETE', `/api/v1/app-installations/${row.id}`)).status).toBe(204);
      expect((await t.request('GET', `/api/v1/app-installations/${row.id}`)).status).toBe(404);
      expect(await t.deps.platformDirectory.installation('slack', 'T0TWO')).toBeNull();
    });

    it('has no create route: a token cannot claim an account id', async () => {
      const res = await t.request('POST', '/api/v1/app-installations', {
        body: { data: { type: 'app-installation', attributes: { provider: 'slack', account_id: 'T0OTHER' } } },
      });
      expect([404, 405]).toContain(res.status);
      expect((await t.deps.platformDirectory.installation('slack', 'T0OTHER'))?.workspaceId).toBe(t.workspaces.other);
    });
  });

  describe('starting platform runs', () => {
    let triggers: Awaited<ReturnType<TestApp['deps']['platformTriggers']['list']>>;
    beforeAll(async () => {
      for (const name of ['First', 'Second']) {
        await workflowWith(
          t,
          name,
          {
            nodes: [node('event', 'app_event'), node('tag', 'set', { values: { who: name, text: '{{ trigger.payload.text }}' } })],
            edges: [edge('event', 'tag')],
          },
          { activate: true },
        );
      }
      await workflowWith(t, 'Inactive', { nodes: [node('event', 'app_event')], edges: [] });
      triggers = await t.deps.platformTriggers.list(t.workspaces.main, 'app_event');
    });
    const countFor = async (key: string) =>
      Number(
        (
          await t.deps.db
            .selectFrom('platform_events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('dedupe_key', '=', key)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const start = (eventKey: string, text: string, workflowKey?: string) =>
      startPlatformRuns(t.deps, {
        provider: 'slack',
        workspaceId: t.workspaces.main,
        eventKey,
        ...(workflowKey ? { workflowKey } : {}),
        triggers,
        trigger: { payload: { text }, event: {} },
      });

    it('finds the app_event triggers of active workflows only', () => {
      expect(triggers).toHaveLength(2);
      expect(new Set(triggers.map((tr) => tr.nodeId))).toEqual(new Set(['event']));
    });

    it('starts one execution per workflow and records the event key in the same commit', async () => {
      const result = await start('Ev1', 'hello');
      expect(result.outcome).toBe('started');
      await t.deps.engine.idle();
      const outputs = await Promise.all(
        (result as { executionIds: string[] }).executionIds.map(async (id) => JSON.parse((await executionRow(t, id)).output!)),
      );
      expect(outputs.map((o) => o.text)).toEqual(['hello', 'hello']);
      expect(await countFor('event:Ev1')).toBe(1);
    });

    it('starts nothing for a redelivery, and one set for 30 concurrent copies', async () => {
      expect(await start('Ev1', 'again')).toEqual({ outcome: 'duplicate' });
      const results = await Promise.all(Array.from({ length: 30 }, () => start('Ev2', 'copies')));
      expect(results.filter((r) => r.outcome === 'started')).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(29);
      await t.deps.engine.idle();
      const rows = await t.deps.db.selectFrom('executions').select('id').where('output', 'like', '%copies%').execute();
      expect(rows).toHaveLength(2);
    });

    it('starts each workflow once per workflow key across two event ids (a message and its app_mention)', async () => {
      const [a, b] = await Promise.all([start('Ev3', 'mention', 'C1:1.000'), start('Ev4', 'mention', 'C1:1.000')]);
      const started = [a, b].flatMap((r) => (r.outcome === 'started' ? r.executionIds : []));
      expect(started).toHaveLength(2);
      expect(await start('Ev5', 'mention', 'C1:1.000')).toEqual({ outcome: 'no_match' });
    });

    it('forgets dedupe keys after a week (retention), keeping recent ones', async () => {
      await t.deps.db
        .insertInto('platform_events')
        .values({
          provider: 'slack',
          dedupe_key: 'event:Old',
          workspace_id: t.workspaces.main,
          execution_count: 1,
          created_at: '2026-10-20T00:00:00.000000Z',
        })
        .execute();
      await new RetentionPruner(t.deps.db, t.clock, 0).runOnce();
      expect(await countFor('event:Old')).toBe(0);
      expect(await countFor('event:Ev1')).toBe(1);
    });
  });
});
