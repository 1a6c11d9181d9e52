import type { FastifyInstance } from 'fastify';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { buildPlatformEndpoints } from '../src/platform/platform-endpoints.js';
import { describeEachDialect } from './support/dialects.js';
import { edge, node, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const ACCOUNT = 'AC00000000000000000000000000000001';
const AUTH_TOKEN = 'twilio-auth-token-0123456789abcdef';
const PATH = '/webhooks/inbound/twilio';

/** A Twilio "A message comes in" form, signed by the twilio library for the given public URL. */
function delivery(url: string, params: Record<string, string | string[]>, token = AUTH_TOKEN) {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
  return {
    payload: body.toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(token, url, params),
    },
  };
}

const sms = (messageSid: string, extra: Record<string, string | string[]> = {}) => ({
  AccountSid: ACCOUNT,
  MessageSid: messageSid,
  SmsSid: messageSid,
  From: '+15550100001',
  To: '+15550100999',
  Body: 'Hello there',
  NumMedia: '0',
  ...extra,
});

describeEachDialect('Twilio SMS platform endpoint', (dialect) => {
  let t: TestApp;
  const executionsOf = async (workflowId: string) =>
    t.deps.db.selectFrom('executions').selectAll().where('workflow_id', '=', workflowId).execute();
  const post = (url: string, params: Record<string, string | string[]>, token?: string) => {
    const signed = delivery(`http://sy.test${url}`, params, token);
    return t.app.inject({ method: 'POST', url, ...signed });
  };
  let plain: string;
  let replying: string;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.deps.apps.install({
      provider: 'twilio',
      workspace: { id: t.workspaces.main },
      accountId: ACCOUNT,
      credentials: { auth_token: AUTH_TOKEN },
    });
    plain = await workflowWith(
      t,
      'SMS log',
      {
        nodes: [node('in', 'sms', { numbers: ['+15550100999'] }), node('keep', 'set', { values: { text: '{{ trigger.payload.text }}' } })],
        edges: [edge('in', 'keep')],
      },
      { activate: true },
    );
    replying = await workflowWith(
      t,
      'SMS reply',
      {
        nodes: [
          node('in', 'sms', { numbers: ['+15550100777'] }),
          node('answer', 'respond_to_webhook', { body: { text: 'Got "{{ trigger.payload.text }}" <ok> & thanks' } }),
        ],
        edges: [edge('in', 'answer')],
      },
      { activate: true },
    );
  });
  afterAll(() => t.close());

  it('starts the sms workflow with the normalized payload and answers an empty TwiML response', async () => {
    const res = await post(
      PATH,
      sms('SM001', {
        NumMedia: '2',
        MediaUrl0: 'https://api.twilio.com/m/ME1',
        MediaContentType0: 'image/jpeg',
        MediaUrl1: 'https://api.twilio.com/m/ME2',
        MediaContentType1: 'image/png',
      }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/xml/);
    expect(res.body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response/>');
    await t.deps.engine.idle();
    const [run] = await executionsOf(plain);
    expect(run!.status).toBe('completed');
    const trigger = await t.deps.db
      .selectFrom('execution_steps')
      .select('output')
      .where('workflow_execution_id', '=', run!.id)
      .where('node_id', '=', 'in')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(trigger.output!).payload).toEqual({
      from: '+15550100001',
      to: '+15550100999',
      text: 'Hello there',
      message_id: 'SM001',
      media: [
        { url: 'https://api.twilio.com/m/ME1', content_type: 'image/jpeg' },
        { url: 'https://api.twilio.com/m/ME2', content_type: 'image/png' },
      ],
      account_id: ACCOUNT,
    });
    expect(JSON.parse(run!.output!)).toEqual({ text: 'Hello there' });
  });

  it("answers with the respond step's text in a TwiML Message, XML-escaped", async () => {
    const res = await post(PATH, sms('SM002', { To: '+15550100777', Body: 'Tom & <Jerry>' }));
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Message>Got &quot;Tom &amp; &lt;Jerry&gt;&quot; &lt;ok&gt; &amp; thanks</Message></Response>',
    );
    expect(await executionsOf(replying)).toHaveLength(1);
  });

  it('starts nothing for a redelivery of the same MessageSid, and one run for concurrent copies', async () => {
    const again = await post(PATH, sms('SM001'));
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response/>');
    const copies = await Promise.all(Array.from({ length: 10 }, () => post(PATH, sms('SM003'))));
    expect(copies.map((c) => c.statusCode)).toEqual(Array(10).fill(200));
    await t.deps.engine.idle();
    expect(await executionsOf(plain)).toHaveLength(2);
  });

  it('starts nothing for a number no trigger listens to', async () => {
    const res = await post(PATH, sms('SM004', { To: '+15550100555' }));
    expect(res.statusCode).toBe(200);
    await t.deps.engine.idle();
    expect((await executionsOf(plain)).length + (await executionsOf(replying)).length).toBe(3);
  });

  it('verifies repeated parameters the way the twilio library signs them', async () => {
    const res = await post(`${PATH}?tag=a`, sms('SM005', { Extra: ['b', 'a', 'b'] }));
    expect(res.statusCode).toBe(200);
    await t.deps.engine.idle();
    expect(await executionsOf(plain)).toHaveLength(3);
  });

  describe('refusals: 401, and no execution', () => {
    const refused = async (res: { statusCode: number; body: string }) => {
      expect(res.statusCode).toBe(401);
      expect(JSON.parse(res.body).errors[0]).toMatchObject({
        status: '401',
        code: 'unauthorized',
        detail: 'the delivery is not authenticated',
      });
    };
    afterAll(async () => {
      await t.deps.engine.idle();
      expect(await executionsOf(plain)).toHaveLength(3);
    });

    it('refuses a forged signature (another token), a tampered body and a missing signature', async () => {
      await refused(await post(PATH, sms('SM100'), 'not-the-auth-token'));
      const signed = delivery(`http://sy.test${PATH}`, sms('SM101'));
      await refused(
        await t.app.inject({ method: 'POST', url: PATH, headers: signed.headers, payload: signed.payload.replace('Hello', 'Hijack') }),
      );
      await refused(
        await t.app.inject({
          method: 'POST',
          url: PATH,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: signed.payload,
        }),
      );
      expect(
        await t.deps.db
          .selectFrom('platform_events')
          .select('dedupe_key')
          .where('dedupe_key', 'in', ['event:SM100', 'event:SM101'])
          .execute(),
      ).toEqual([]);
    });

    it('answers an unknown AccountSid exactly like a bad signature', async () => {
      const unknown = { ...sms('SM102'), AccountSid: 'AC99999999999999999999999999999999' };
      const res = await post(PATH, unknown);
      await refused(res);
      const bad = await post(PATH, sms('SM103'), 'wrong');
      const withoutId = (body: string) => JSON.parse(body).errors.map(({ id: _id, ...rest }: { id: string }) => rest);
      expect(withoutId(res.body)).toEqual(withoutId(bad.body));
      expect(res.headers['content-type']).toBe(bad.headers['content-type']);
    });

    it('refuses a signature over the internal URL rather than SWITCHYARD_BASE_URL', async () => {
      const signed = delivery(`http://localhost:80${PATH}`, sms('SM104'));
      await refused(await t.app.inject({ method: 'POST', url: PATH, ...signed }));
    });
  });

  describe('behind a proxy: the public base URL differs from the address the app listens on', () => {
    let proxied: FastifyInstance;
    const PUBLIC = 'https://hooks.example.com:8443/switchyard';
    beforeAll(async () => {
      const platformEndpoints = buildPlatformEndpoints({
        db: t.deps.db,
        dialect: t.deps.database.dialect,
        engine: t.deps.engine,
        clock: t.deps.clock,
        directory: t.deps.platformDirectory,
        triggers: t.deps.platformTriggers,
        metrics: null,
        baseUrl: PUBLIC,
        apps: t.deps.apps,
        slackApiUrl: 'https://slack.com/api',
        slackOAuth: t.deps.slackOAuth,
      });
      proxied = await buildApp({
        ...t.deps,
        platformEndpoints,
        config: { apiRateLimit: 0, webhookRateLimit: 0, trustProxy: [], baseUrl: PUBLIC },
        logger: false,
      });
    });
    afterAll(() => proxied.close());

    it('accepts the signature over the public URL, whatever Host and port the request reached', async () => {
      const signed = delivery(`${PUBLIC}${PATH}?src=proxy`, sms('SM200'));
      const res = await proxied.inject({
        method: 'POST',
        url: `${PATH}?src=proxy`,
        headers: { ...signed.headers, host: '10.0.0.7:3000' },
        payload: signed.payload,
      });
      expect(res.statusCode).toBe(200);
      await t.deps.engine.idle();
      expect(await executionsOf(plain)).toHaveLength(4);
    });

    it('refuses the signature over the internal address', async () => {
      const signed = delivery(`http://10.0.0.7:3000${PATH}`, sms('SM201'));
      const res = await proxied.inject({
        method: 'POST',
        url: PATH,
        headers: { ...signed.headers, host: '10.0.0.7:3000' },
        payload: signed.payload,
      });
      expect(res.statusCode).toBe(401);
    });
  });
});
