import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMailgunSignature } from '../src/platform/email/mailgun-signature.js';
import { describeEachDialect } from './support/dialects.js';
import { edge, node, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const SIGNING_KEY = 'key-mailgun-signing-0123456789abcdef';
const BIG = Buffer.alloc(300_000, 7);

/** A real MIME message, composed by nodemailer. */
async function mime(options: { messageId: string; to: string; cc?: string; subject?: string }): Promise<Buffer> {
  return new MailComposer({
    from: '"Zoë Ångström" <zoe@sender.example>',
    to: options.to,
    cc: options.cc,
    subject: options.subject ?? 'Grüße aus Köln — Rechnung №7',
    text: 'Hallo, die Rechnung hängt an.',
    html: '<p>Hallo, die <b>Rechnung</b> hängt an.</p>',
    messageId: options.messageId,
    inReplyTo: '<parent@sender.example>',
    references: ['<root@sender.example>', '<parent@sender.example>'],
    attachments: [
      { filename: 'notiz.txt', content: 'kleine Notiz', contentType: 'text/plain' },
      { filename: 'große-datei.bin', content: BIG, contentType: 'application/octet-stream' },
    ],
  })
    .compile()
    .build();
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

describe('Mailgun signature', () => {
  // Mailgun's docs show the token and timestamp of their example but not the key behind it, so the
  // expected digest was computed independently: printf '%s' "$timestamp$token" | openssl dgst -sha256 -hmac "$key".
  const known = {
    timestamp: '1770920772',
    token: 'e0b5477167110d68991efc6b9f89f0a11066af27834600e123',
    signature: '3f9f9869e390626cfa401e164e5cd201b24d153eafc2004a69d41c945dc93c1e',
  };
  const key = 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0';

  it('accepts the known answer within 300 s either way, and nothing else', () => {
    expect(checkMailgunSignature(key, known, 1770920772_000)).toEqual({ ok: true });
    expect(checkMailgunSignature(key, known, (1770920772 + 300) * 1000)).toEqual({ ok: true });
    expect(checkMailgunSignature(key, known, (1770920772 - 300) * 1000)).toEqual({ ok: true });
    expect(checkMailgunSignature(key, known, (1770920772 + 301) * 1000)).toEqual({ ok: false, reason: 'stale' });
    expect(checkMailgunSignature(key, known, (1770920772 - 301) * 1000)).toEqual({ ok: false, reason: 'stale' });
    expect(checkMailgunSignature('key-other', known, 1770920772_000)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(checkMailgunSignature(key, { ...known, token: `${known.token}x` }, 1770920772_000)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(checkMailgunSignature(key, { ...known, signature: undefined }, 1770920772_000)).toEqual({ ok: false, reason: 'missing' });
  });
});

describeEachDialect('email platform endpoints', (dialect) => {
  let t: TestApp;
  let all: string;
  let invoices: string;
  let other: string;
  const executionsOf = async (workflowId: string) =>
    t.deps.db.selectFrom('executions').selectAll().where('workflow_id', '=', workflowId).orderBy('inserted_at').orderBy('id').execute();
  const triggerOf = async (executionId: string) =>
    JSON.parse(
      (
        await t.deps.db
          .selectFrom('execution_steps')
          .select('output')
          .where('workflow_execution_id', '=', executionId)
          .where('node_id', '=', 'in')
          .executeTakeFirstOrThrow()
      ).output!,
    );

  const signed = (offsetS = 0, key = SIGNING_KEY) => {
    const timestamp = String(Math.floor(t.clock.nowMs() / 1000) + offsetS);
    const token = randomBytes(25).toString('hex');
    return {
      timestamp,
      token,
      signature: createHmac('sha256', key)
        .update(timestamp + token)
        .digest('hex'),
    };
  };
  const mailgunForm = (fields: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: '/webhooks/inbound/mailgun',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.deps.apps.setApp('mailgun', { secrets: { signing_key: SIGNING_KEY } });
    await t.deps.apps.install({ provider: 'mailgun', workspace: { id: t.workspaces.main }, accountId: 'Mail.Example.com' });
    await t.deps.apps.install({ provider: 'mailgun', workspace: { id: t.workspaces.other }, accountId: 'boss@mail.example.com' });
    await t.deps.apps.install({
      provider: 'postmark',
      workspace: { id: t.workspaces.main },
      accountId: 'inbound.example.org',
      credentials: { basic_user: 'pm-main', basic_password: 'pm-main-password-01' },
    });
    await t.deps.apps.install({
      provider: 'postmark',
      workspace: { id: t.workspaces.other },
      accountId: 'other.example.org',
      credentials: { basic_user: 'pm-other', basic_password: 'pm-other-password-02' },
    });
    all = await workflowWith(
      t,
      'All mail',
      {
        nodes: [node('in', 'email'), node('keep', 'set', { values: { subject: '{{ trigger.payload.subject }}' } })],
        edges: [edge('in', 'keep')],
      },
      { activate: true },
    );
    invoices = await workflowWith(
      t,
      'Invoices',
      { nodes: [node('in', 'email', { recipients: ['billing@mail.example.com'], subject_contains: 'RECHNUNG' })], edges: [] },
      { activate: true },
    );
    const created = await t.request('POST', '/api/v1/workflows', { token: t.tokens.other, body: { data: { name: 'Boss mail' } } });
    other = created.body.data.id;
    await t.request('PUT', `/api/v1/workflows/${other}/graph`, {
      token: t.tokens.other,
      body: { data: { graph: { nodes: [node('in', 'email')], edges: [] }, layout: false } },
    });
    expect((await t.request('POST', `/api/v1/workflows/${other}/activate`, { token: t.tokens.other })).status).toBe(200);
  });
  afterAll(() => t.close());

  describe('Mailgun', () => {
    it('parses the raw MIME after verification and starts the matching workflows with the normalized payload', async () => {
      const message = await mime({
        messageId: '<m1@sender.example>',
        to: 'Billing <billing@mail.example.com>',
        cc: 'nobody@elsewhere.example',
      });
      const res = await mailgunForm({
        ...signed(),
        recipient: 'billing@mail.example.com',
        sender: 'zoe@sender.example',
        'body-mime': message.toString('utf8'),
      });
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ ok: true, started: 1 });
      await t.deps.engine.idle();
      const [run] = await executionsOf(all);
      expect(await executionsOf(invoices)).toHaveLength(1);
      const { payload, event } = await triggerOf(run!.id);
      // The raw provider event: every posted field but the raw MIME and the signature material.
      expect(event).toEqual({
        provider: 'mailgun',
        recipient: 'billing@mail.example.com',
        sender: 'zoe@sender.example',
        timestamp: expect.any(String),
      });
      expect(payload).toMatchObject({
        from: 'zoe@sender.example',
        to: ['billing@mail.example.com'],
        cc: ['nobody@elsewhere.example'],
        subject: 'Grüße aus Köln — Rechnung №7',
        text: 'Hallo, die Rechnung hängt an.',
        html: '<p>Hallo, die <b>Rechnung</b> hängt an.</p>',
        message_id: '<m1@sender.example>',
        in_reply_to: '<parent@sender.example>',
        references: ['<root@sender.example>', '<parent@sender.example>'],
        recipient: 'billing@mail.example.com',
      });
      expect(payload.attachments).toEqual([
        {
          filename: 'notiz.txt',
          content_type: 'text/plain',
          size: 12,
          sha256: sha256('kleine Notiz'),
          content_base64: Buffer.from('kleine Notiz').toString('base64'),
        },
        {
          filename: 'große-datei.bin',
          content_type: 'application/octet-stream',
          size: BIG.length,
          sha256: sha256(BIG),
          content_base64: null,
        },
      ]);
      // The 300 KB attachment is over the 256 KiB default: listed, its content never stored.
      expect(JSON.stringify(payload).length).toBeLessThan(10_000);
    });

    it("accepts multipart with Mailgun's parsed fields and attachment files", async () => {
      const form = new FormData();
      for (const [name, value] of Object.entries({
        ...signed(),
        recipient: 'billing@mail.example.com',
        from: 'Zoë <zoe@sender.example>',
        To: 'billing@mail.example.com',
        subject: 'Rechnung 8',
        'body-plain': 'plain body',
        'Message-Id': '<m2@sender.example>',
      }))
        form.append(name, value);
      form.append('attachment-1', new Blob([Buffer.from('pdf-bytes')], { type: 'application/pdf' }), 'r8.pdf');
      const request = new Request('http://sy.test/', { method: 'POST', body: form });
      const res = await t.app.inject({
        method: 'POST',
        url: '/webhooks/inbound/mailgun',
        headers: { 'content-type': request.headers.get('content-type')! },
        payload: Buffer.from(await request.arrayBuffer()),
      });
      expect(res.statusCode).toBe(200);
      await t.deps.engine.idle();
      const runs = await executionsOf(invoices);
      expect(runs).toHaveLength(2);
      expect((await triggerOf(runs[1]!.id)).payload).toMatchObject({
        from: 'zoe@sender.example',
        subject: 'Rechnung 8',
        text: 'plain body',
        message_id: '<m2@sender.example>',
        attachments: [{ filename: 'r8.pdf', content_type: 'application/pdf', size: 9, sha256: sha256('pdf-bytes') }],
      });
    });

    it('starts nothing for a redelivered Message-ID, and each workflow once for a message to several recipients', async () => {
      const message = (await mime({ messageId: '<m1@sender.example>', to: 'billing@mail.example.com' })).toString('utf8');
      expect(JSON.parse((await mailgunForm({ ...signed(), recipient: 'billing@mail.example.com', 'body-mime': message })).body)).toEqual({
        ok: true,
        started: 0,
      });
      const both = (await mime({ messageId: '<m3@sender.example>', to: 'a@mail.example.com, b@mail.example.com' })).toString('utf8');
      await mailgunForm({ ...signed(), recipient: 'a@mail.example.com', 'body-mime': both });
      await mailgunForm({ ...signed(), recipient: 'b@mail.example.com', 'body-mime': both });
      await t.deps.engine.idle();
      expect(await executionsOf(all)).toHaveLength(3);
    });

    it('routes an address installed in another workspace there, ahead of its domain; an unknown recipient is 200 and dropped', async () => {
      const message = (await mime({ messageId: '<m4@sender.example>', to: 'boss@mail.example.com' })).toString('utf8');
      expect((await mailgunForm({ ...signed(), recipient: 'boss@mail.example.com', 'body-mime': message })).statusCode).toBe(200);
      const stray = (await mime({ messageId: '<m5@sender.example>', to: 'someone@unknown.example' })).toString('utf8');
      const dropped = await mailgunForm({ ...signed(), recipient: 'someone@unknown.example', 'body-mime': stray });
      expect(dropped.statusCode).toBe(200);
      expect(JSON.parse(dropped.body)).toEqual({ ok: true, started: 0 });
      await t.deps.engine.idle();
      expect(await executionsOf(other)).toHaveLength(1);
      expect(await executionsOf(all)).toHaveLength(3);
    });

    it('refuses forged, missing, stale and future signatures with 401 and a replayed token with 406, starting nothing', async () => {
      const message = (await mime({ messageId: '<m9@sender.example>', to: 'billing@mail.example.com' })).toString('utf8');
      const body = { recipient: 'billing@mail.example.com', 'body-mime': message };
      for (const fields of [
        signed(0, 'key-forged'),
        { ...signed(), signature: '' },
        { timestamp: signed().timestamp },
        signed(-301),
        signed(301),
      ]) {
        const res = await mailgunForm({ ...body, ...fields });
        expect(res.statusCode).toBe(401);
        expect(JSON.parse(res.body).errors[0]).toMatchObject({ code: 'unauthorized', detail: 'the delivery is not authenticated' });
      }
      const once = signed();
      const replayMessage = (await mime({ messageId: '<m10@sender.example>', to: 'x@mail.example.com' })).toString('utf8');
      expect((await mailgunForm({ ...once, recipient: 'x@mail.example.com', 'body-mime': replayMessage })).statusCode).toBe(200);
      const replay = await mailgunForm({ ...once, ...body });
      expect(replay.statusCode).toBe(406);
      expect(JSON.parse(replay.body).errors[0]).toMatchObject({ code: 'not_acceptable', source: { pointer: '/token' } });
      await t.deps.engine.idle();
      expect(await executionsOf(invoices)).toHaveLength(2);
      expect(await executionsOf(all)).toHaveLength(4);
      expect(await t.deps.db.selectFrom('platform_events').select('dedupe_key').where('dedupe_key', 'like', '%m9@%').execute()).toEqual([]);
    });

    describe('the forward URL docs/triggers.md gives', () => {
      // The guide's URL, read from the guide: Mailgun posts raw MIME only to a URL ending in `mime`.
      const guide = readFileSync(new URL('../docs/triggers.md', import.meta.url), 'utf8');
      const path = /forward\("https:\/\/<your public base URL>(\/webhooks\/inbound\/[^"]+)"\)/.exec(guide)?.[1];
      /** What Mailgun posts to a `…mime` URL: multipart with `body-mime`, the message as received. */
      const mimePost = async (fields: Record<string, string>) => {
        const form = new FormData();
        for (const [name, value] of Object.entries(fields)) form.append(name, value);
        const request = new Request('http://sy.test/', { method: 'POST', body: form });
        return t.app.inject({
          method: 'POST',
          url: path!,
          headers: { 'content-type': request.headers.get('content-type')! },
          payload: Buffer.from(await request.arrayBuffer()),
        });
      };

      it('ends in mime, so Mailgun posts the raw message there', () => {
        expect(path).toBe('/webhooks/inbound/mailgun/mime');
      });

      it('parses the raw MIME Mailgun posts there with mailparser, after the same verification', async () => {
        const message = await mime({ messageId: '<mime1@sender.example>', to: 'Billing <billing@mail.example.com>' });
        const res = await mimePost({
          ...signed(),
          recipient: 'billing@mail.example.com',
          sender: 'zoe@sender.example',
          from: 'Zoë Ångström <zoe@sender.example>',
          subject: 'Grüße aus Köln — Rechnung №7',
          'body-mime': message.toString('utf8'),
        });
        expect(res.statusCode, res.body).toBe(200);
        expect(JSON.parse(res.body)).toEqual({ ok: true, started: 1 });
        await t.deps.engine.idle();
        const runs = await executionsOf(invoices);
        expect(runs).toHaveLength(3);
        const { payload, event } = await triggerOf(runs.at(-1)!.id);
        expect(event).toMatchObject({ provider: 'mailgun', recipient: 'billing@mail.example.com' });
        expect(payload).toMatchObject({
          from: 'zoe@sender.example',
          to: ['billing@mail.example.com'],
          subject: 'Grüße aus Köln — Rechnung №7',
          html: '<p>Hallo, die <b>Rechnung</b> hängt an.</p>',
          message_id: '<mime1@sender.example>',
          in_reply_to: '<parent@sender.example>',
          references: ['<root@sender.example>', '<parent@sender.example>'],
        });
        expect(payload.attachments.map((a: { filename: string; size: number }) => [a.filename, a.size])).toEqual([
          ['notiz.txt', 12],
          ['große-datei.bin', BIG.length],
        ]);
      });

      it('refuses a forged signature with 401, and a token already used on the other Mailgun path with 406', async () => {
        const message = (await mime({ messageId: '<mime2@sender.example>', to: 'billing@mail.example.com' })).toString('utf8');
        const forged = await mimePost({ ...signed(0, 'key-forged'), recipient: 'billing@mail.example.com', 'body-mime': message });
        expect(forged.statusCode).toBe(401);
        expect(JSON.parse(forged.body).errors[0]).toMatchObject({ code: 'unauthorized', detail: 'the delivery is not authenticated' });
        const once = signed();
        expect((await mailgunForm({ ...once, recipient: 'nobody@unknown.example', 'body-mime': message })).statusCode).toBe(200);
        expect((await mimePost({ ...once, recipient: 'billing@mail.example.com', 'body-mime': message })).statusCode).toBe(406);
        expect(
          await t.deps.db.selectFrom('platform_events').select('dedupe_key').where('dedupe_key', 'like', '%mime2@%').execute(),
        ).toEqual([]);
      });
    });

    it('keeps seen tokens durably and prunes them once they are outside the window', async () => {
      const once = signed();
      const message = (await mime({ messageId: '<m11@sender.example>', to: 'x@mail.example.com' })).toString('utf8');
      await mailgunForm({ ...once, recipient: 'x@mail.example.com', 'body-mime': message });
      const stored = () =>
        t.deps.db.selectFrom('platform_events').select('dedupe_key').where('dedupe_key', '=', `token:${once.token}`).execute();
      expect(await stored()).toHaveLength(1);
      t.clock.advance(11 * 60_000);
      const later = await mailgunForm({ ...signed(), recipient: 'x@mail.example.com', 'body-mime': message });
      expect(later.statusCode, later.body).toBe(200);
      expect(await stored()).toHaveLength(0);
    });
  });

  describe('Postmark', () => {
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const postmarkJson = (messageId: string, to: string, extra: Record<string, unknown> = {}) => ({
      FromName: 'Zoë Ångström',
      From: 'zoe@sender.example',
      FromFull: { Email: 'zoe@sender.example', Name: 'Zoë Ångström' },
      To: to,
      ToFull: [{ Email: to, Name: '' }],
      CcFull: [],
      BccFull: [],
      OriginalRecipient: to,
      Subject: 'Grüße — Frage',
      MessageID: '22c74902-a0c1-4511-804f-341342852c90',
      TextBody: 'Text body',
      HtmlBody: '<p>Html body</p>',
      Headers: [
        { Name: 'Message-ID', Value: messageId },
        { Name: 'In-Reply-To', Value: '<parent@sender.example>' },
        { Name: 'References', Value: '<root@sender.example> <parent@sender.example>' },
      ],
      Attachments: [{ Name: 'a.txt', Content: Buffer.from('attached').toString('base64'), ContentType: 'text/plain', ContentLength: 8 }],
      ...extra,
    });
    const post = (body: unknown, authorization?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/webhooks/inbound/postmark',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        payload: JSON.stringify(body),
      });

    it("accepts the installation's Basic credentials and starts the workflows with the normalized payload", async () => {
      const res = await post(postmarkJson('<p1@sender.example>', 'help@inbound.example.org'), basic('pm-main', 'pm-main-password-01'));
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ ok: true, started: 1 });
      await t.deps.engine.idle();
      const runs = await executionsOf(all);
      expect((await triggerOf(runs.at(-1)!.id)).payload).toEqual({
        from: 'zoe@sender.example',
        to: ['help@inbound.example.org'],
        cc: [],
        subject: 'Grüße — Frage',
        text: 'Text body',
        html: '<p>Html body</p>',
        message_id: '<p1@sender.example>',
        in_reply_to: '<parent@sender.example>',
        references: ['<root@sender.example>', '<parent@sender.example>'],
        recipient: 'help@inbound.example.org',
        attachments: [
          {
            filename: 'a.txt',
            content_type: 'text/plain',
            size: 8,
            sha256: sha256('attached'),
            content_base64: Buffer.from('attached').toString('base64'),
          },
        ],
      });
      // The raw provider event: Postmark's JSON as posted, each attachment listed without its content.
      const { event } = await triggerOf(runs.at(-1)!.id);
      const { Attachments: _attachments, ...posted } = postmarkJson('<p1@sender.example>', 'help@inbound.example.org') as Record<
        string,
        unknown
      >;
      expect(event).toEqual({
        provider: 'postmark',
        ...posted,
        Attachments: [{ Name: 'a.txt', ContentType: 'text/plain', ContentLength: 8 }],
      });
    });

    it('dedupes a redelivery by Message-ID', async () => {
      const res = await post(postmarkJson('<p1@sender.example>', 'help@inbound.example.org'), basic('pm-main', 'pm-main-password-01'));
      expect(JSON.parse(res.body)).toEqual({ ok: true, started: 0 });
    });

    it('refuses missing, wrong and unknown credentials with 401 before reading the body', async () => {
      for (const authorization of [undefined, basic('pm-main', 'wrong'), basic('nobody', 'pm-main-password-01'), 'Bearer pm-main']) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/webhooks/inbound/postmark',
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          payload: '{not json',
        });
        expect(res.statusCode).toBe(401);
        expect(JSON.parse(res.body).errors[0]).toMatchObject({ code: 'unauthorized' });
      }
    });

    it("does not let one installation's credentials reach another workspace's recipients", async () => {
      const res = await post(postmarkJson('<p2@sender.example>', 'ceo@other.example.org'), basic('pm-main', 'pm-main-password-01'));
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ ok: true, started: 0 });
      const own = await post(postmarkJson('<p3@sender.example>', 'ceo@other.example.org'), basic('pm-other', 'pm-other-password-02'));
      expect(JSON.parse(own.body)).toEqual({ ok: true, started: 1 });
      await t.deps.engine.idle();
      expect(await executionsOf(other)).toHaveLength(2);
    });
  });
});
