import { createHmac, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createLogger } from '../src/lib/logger.js';
import { describeEachDialect } from './support/dialects.js';
import { node, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const SIGNING_KEY = 'key-mailgun-signing-refusals-0123456789';
const PARTS = 10_000;

/**
 * A message with `parts` attachments, as a mail client would build it: multipart/mixed with
 * `parts` + 1 children (the text body first). Written out here rather than composed part by
 * part (nodemailer takes seconds for 10,000); the MIME is the same shape.
 */
function manyParts(parts: number, messageId: string): string {
  const boundary = '----=_Part_refusals';
  const head = [
    'From: "Zoë" <zoe@sender.example>',
    'To: billing@mail.example.com',
    'Subject: Many parts',
    `Message-ID: ${messageId}`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'See the attachments.',
  ];
  const attachments = Array.from({ length: parts }, (_, i) =>
    [
      `--${boundary}`,
      `Content-Type: text/plain; name="p${i}.txt"`,
      `Content-Disposition: attachment; filename="p${i}.txt"`,
      '',
      `part ${i}`,
    ].join('\r\n'),
  );
  return [...head, ...attachments, `--${boundary}--`, ''].join('\r\n');
}

interface LogLine {
  msg: string;
  [key: string]: unknown;
}

describeEachDialect('Mailgun deliveries that cannot be parsed', (dialect) => {
  let t: TestApp;
  let app: FastifyInstance;
  let workflowId: string;
  const chunks: string[] = [];
  const logLines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    // The test app logs nothing; this one logs to memory, over the same services.
    const destination = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    const { logger } = createLogger({ level: 'info', format: 'json', base: {}, destination });
    app = await buildApp({ ...t.deps, config: { apiRateLimit: 0, trustProxy: [], baseUrl: 'http://sy.test' }, logger });
    await t.deps.apps.setApp('mailgun', { secrets: { signing_key: SIGNING_KEY } });
    await t.deps.apps.install({ provider: 'mailgun', workspace: { id: t.workspaces.main }, accountId: 'mail.example.com' });
    workflowId = await workflowWith(t, 'All mail', { nodes: [node('in', 'email')], edges: [] }, { activate: true });
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  /** What Mailgun posts to a `…/mime` URL, signed as Mailgun signs it (test/platform-email.test.ts). */
  const deliver = async (message: string) => {
    const timestamp = String(Math.floor(t.clock.nowMs() / 1000));
    const token = randomBytes(25).toString('hex');
    const signature = createHmac('sha256', SIGNING_KEY)
      .update(timestamp + token)
      .digest('hex');
    const form = new FormData();
    for (const [name, value] of Object.entries({
      timestamp,
      token,
      signature,
      recipient: 'billing@mail.example.com',
      'body-mime': message,
    }))
      form.append(name, value);
    const request = new Request('http://sy.test/', { method: 'POST', body: form });
    return app.inject({
      method: 'POST',
      url: '/webhooks/inbound/mailgun/mime',
      headers: { 'content-type': request.headers.get('content-type')! },
      payload: Buffer.from(await request.arrayBuffer()),
    });
  };
  const runs = async () => (await t.deps.db.selectFrom('executions').select('id').where('workflow_id', '=', workflowId).execute()).length;

  it('answers a signed message of 10,000 MIME parts with 406, which Mailgun does not retry, and logs why', async () => {
    const res = await deliver(manyParts(PARTS, '<many-parts@sender.example>'));
    expect(res.statusCode, res.body).toBe(406);
    expect(JSON.parse(res.body).errors).toEqual([
      expect.objectContaining({
        code: 'not_acceptable',
        detail: 'the message (body-mime) cannot be parsed: Max allowed child nodes exceeded',
        source: { pointer: '/body-mime' },
      }),
    ]);
    expect(logLines().filter((line) => line.msg === 'Mailgun message refused: its MIME does not parse')).toEqual([
      expect.objectContaining({ level: 40, provider: 'mailgun', reason: 'Max allowed child nodes exceeded' }),
    ]);
    await t.deps.engine.idle();
    expect(await runs()).toBe(0);
    expect(
      await t.deps.db.selectFrom('platform_events').select('dedupe_key').where('dedupe_key', 'like', '%many-parts@%').execute(),
    ).toEqual([]);
  });

  it('still starts the workflow for a message with a few parts', async () => {
    const message = await new MailComposer({
      from: 'zoe@sender.example',
      to: 'billing@mail.example.com',
      subject: 'Few parts',
      text: 'See the attachments.',
      messageId: '<few-parts@sender.example>',
      attachments: Array.from({ length: 20 }, (_, i) => ({ filename: `p${i}.txt`, content: `part ${i}` })),
    })
      .compile()
      .build();
    const res = await deliver(message.toString('utf8'));
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ok: true, started: 1 });
    await t.deps.engine.idle();
    expect(await runs()).toBe(1);
  });
});
