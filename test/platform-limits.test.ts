import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** The body cap and the per-address rate limit in front of the SMS and email endpoints. */
describeEachDialect('platform endpoint limits (Twilio, Mailgun, Postmark)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { webhookRateLimit: 3 });
  });
  afterAll(() => t.close());

  it('answers 413 for a Twilio body over 64 KiB before reading it', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/webhooks/inbound/twilio', remoteAddress: '203.0.113.1', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `Body=${'x'.repeat(65 * 1024)}` });
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(res.body).errors[0]).toMatchObject({ code: 'payload_too_large', detail: 'the body exceeds the limit of 65536 bytes' });
  });

  it('limits deliveries per source address across the platform endpoints, apart from other addresses', async () => {
    const from = (address: string, path: string) => t.app.inject({ method: 'POST', url: `/webhooks/inbound/${path}`, remoteAddress: address, headers: { 'content-type': 'application/json' }, payload: '{}' });
    const statuses = [];
    for (const path of ['postmark', 'mailgun', 'twilio', 'postmark']) statuses.push((await from('203.0.113.9', path)).statusCode);
    expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
    expect(statuses[3]).toBe(429);
    expect((await from('203.0.113.10', 'postmark')).statusCode).toBe(401);
    expect(await t.deps.db.selectFrom('executions').select('id').execute()).toEqual([]);
  });
});
