import { rmSync } from 'node:fs';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/program.js';
import { TEST_DATABASE_URL, type TestDatabase } from './support/dialects.js';
import { edge, node } from './support/engine-helpers.js';
import { callApi, processTestSetup, startServe, type ServeProcess, until } from './support/serve-process.js';

const ACCOUNT = 'AC00000000000000000000000000000042';
const AUTH_TOKEN = 'twilio-auth-token-processes-0123456789';
/** The public URL Twilio is given (behind a proxy): the signature covers it, not the listening address. */
const BASE_URL = 'https://sms.example.test/switchyard';
const PATH = '/webhooks/inbound/twilio';

const sms = (messageSid: string, to: string, body: string) => ({
  AccountSid: ACCOUNT,
  MessageSid: messageSid,
  SmsSid: messageSid,
  From: '+15550100001',
  To: to,
  Body: body,
  NumMedia: '0',
});

/**
 * An SMS answered by a respond step when the API and the worker are separate processes on one
 * PostgreSQL (`serve --role api` and `serve --role worker`): the API process verifies the
 * delivery and commits the run, the worker runs it, and the respond step's answer travels back
 * to the API process, which holds Twilio's request open and answers with the TwiML message.
 */
describe.skipIf(!TEST_DATABASE_URL)('Twilio SMS across an API process and a worker on one PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let api: ServeProcess;
  let worker: ServeProcess | null = null;
  let token: string;

  beforeAll(async () => {
    ({ database, token, dataDir } = await processTestSetup('sy-sms-cluster-'));
    env = {
      DATABASE_URL: database.url!,
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_SECRET_KEY: 'sms-cluster-test-key-sms-cluster-test-key',
      SWITCHYARD_BASE_URL: BASE_URL,
      SWITCHYARD_API_RATE_LIMIT: '0',
      SWITCHYARD_WEBHOOK_RATE_LIMIT: '0',
      SWITCHYARD_LOG_LEVEL: 'warn',
      SWITCHYARD_LEASE_MS: '3000',
      SWITCHYARD_POLL_MS: '500',
      SWITCHYARD_SHUTDOWN_GRACE_MS: '2000',
    };
    // The operator's command, with the secret key every process shares (the auth token is stored encrypted).
    const program = buildProgram(
      env,
      () => {},
      () => {},
      async () => '',
    );
    program.exitOverride();
    await program.parseAsync([
      'node',
      'switchyard',
      'app',
      'install',
      'twilio',
      '--workspace',
      'main',
      '--account-id',
      ACCOUNT,
      '--auth-token',
      AUTH_TOKEN,
    ]);
    [api, worker] = await Promise.all([startServe({ ...env, SWITCHYARD_ROLE: 'api' }), startServe({ ...env, SWITCHYARD_ROLE: 'worker' })]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await database?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (method: string, url: string, body?: unknown) => callApi(api.address, token, method, url, body);

  async function activeWorkflow(name: string, graph: Record<string, unknown>): Promise<string> {
    const created = await call('POST', '/workflows', { data: { name } });
    const id = created.body.data.id as string;
    const put = await call('PUT', `/workflows/${id}/graph`, { data: { graph, layout: false } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect((await call('POST', `/workflows/${id}/activate`)).status).toBe(200);
    return id;
  }

  /** Twilio's delivery, signed by the twilio library over the public URL, sent to the API process. */
  function deliver(params: Record<string, string>): Promise<Response> {
    return fetch(`${api.address}${PATH}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${BASE_URL}${PATH}`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
  }

  const executionsOf = (workflowId: string) =>
    database.db.selectFrom('executions').select(['id', 'status', 'lease_owner', 'output']).where('workflow_id', '=', workflowId).execute();

  it("answers the SMS with the respond step's text, XML-escaped, run by the worker; a redelivery starts nothing", async () => {
    const replying = await activeWorkflow('SMS reply', {
      nodes: [
        node('in', 'sms', { numbers: ['+15550100777'] }),
        node('shout', 'code', { code: 'return { shout: input.payload.text.toUpperCase() };' }),
        node('answer', 'respond_to_webhook', { body: { text: '{{ input.shout }} & <thanks>' } }),
      ],
      edges: [edge('in', 'shout'), edge('shout', 'answer')],
    });
    const res = await deliver(sms('SMC001', '+15550100777', 'tom & <jerry>'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/xml/);
    expect(await res.text()).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Message>TOM &amp; &lt;JERRY&gt; &amp; &lt;thanks&gt;</Message></Response>',
    );
    const [run] = await until(
      () => executionsOf(replying),
      (rows) => rows.length === 1 && rows[0]!.status === 'completed',
    );
    expect(res.headers.get('x-execution-id')).toBe(run!.id);
    // Only the worker runs steps: the run carries its lease.
    expect(run!.lease_owner).not.toBeNull();

    const again = await deliver(sms('SMC001', '+15550100777', 'tom & <jerry>'));
    expect(again.status).toBe(200);
    expect(await again.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response/>');
    expect(await executionsOf(replying)).toHaveLength(1);
  }, 60_000);

  it("refuses a delivery signed over the API process's own address rather than SWITCHYARD_BASE_URL", async () => {
    const params = sms('SMC002', '+15550100777', 'hello');
    const res = await fetch(`${api.address}${PATH}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${api.address}${PATH}`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    expect(res.status).toBe(401);
    expect(await database.db.selectFrom('platform_events').select('dedupe_key').where('dedupe_key', 'like', '%SMC002%').execute()).toEqual(
      [],
    );
  }, 30_000);

  it('without a worker the API process answers an empty TwiML response at the reply timeout, and the run completes once a worker is up', async () => {
    const waiting = await activeWorkflow('SMS no worker', {
      nodes: [
        node('in', 'sms', { numbers: ['+15550100888'], reply_timeout_ms: 1_000 }),
        node('answer', 'respond_to_webhook', { body: 'too late' }),
      ],
      edges: [edge('in', 'answer')],
    });
    await worker!.stop();
    worker = null;
    const started = Date.now();
    const res = await deliver(sms('SMC003', '+15550100888', 'anyone there?'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response/>');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect((await executionsOf(waiting)).map((row) => row.status)).toEqual(['pending']);
    worker = await startServe({ ...env, SWITCHYARD_ROLE: 'worker' });
    const [run] = await until(
      () => executionsOf(waiting),
      (rows) => rows[0]?.status === 'completed',
    );
    expect(JSON.parse(run!.output!)).toMatchObject({ body: 'too late' });
  }, 90_000);
});
