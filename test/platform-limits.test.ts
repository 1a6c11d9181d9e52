import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EMAIL_MAX_BODY_BYTES } from '../src/platform/email/mailgun-endpoint.js';
import { SLACK_MAX_BODY_BYTES } from '../src/platform/slack/slack-events.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * `bytes` of form body sent as a stream with no Content-Length (chunked), so only the bytes the
 * server counts as they arrive can refuse it; one 1 MiB chunk is reused, nothing is built whole.
 */
function streamedBody(bytes: number): Readable {
  const chunk = Buffer.alloc(1024 * 1024, 'x');
  chunk.write('a=');
  let left = bytes;
  return Readable.from(
    (function* () {
      while (left > 0) {
        const size = Math.min(left, chunk.length);
        left -= size;
        yield size === chunk.length ? chunk : chunk.subarray(0, size);
      }
    })(),
  );
}

/** The body cap and the per-address rate limit in front of the chat-app, SMS and email endpoints. */
describeEachDialect('platform endpoint limits (Slack, Twilio, Mailgun, Postmark)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { webhookRateLimit: 3 });
  });
  afterAll(() => t.close());

  it('answers 413 for a Twilio body over 64 KiB before reading it', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/inbound/twilio',
      remoteAddress: '203.0.113.1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `Body=${'x'.repeat(65 * 1024)}`,
    });
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(res.body).errors[0]).toMatchObject({
      code: 'payload_too_large',
      detail: 'the body exceeds the limit of 65536 bytes',
    });
  });

  it('answers 413 for a Slack body over 1 MiB before reading it, and reads one of exactly 1 MiB (then 401: unsigned)', async () => {
    expect(SLACK_MAX_BODY_BYTES).toBe(1024 * 1024);
    const body = (bytes: number) => JSON.stringify({ type: 'event_callback', pad: '' }).replace('""', `"${'x'.repeat(bytes - 34)}"`);
    expect(body(SLACK_MAX_BODY_BYTES)).toHaveLength(SLACK_MAX_BODY_BYTES);
    const over = await t.app.inject({
      method: 'POST',
      url: '/webhooks/inbound/slack',
      remoteAddress: '203.0.113.2',
      headers: { 'content-type': 'application/json' },
      payload: body(SLACK_MAX_BODY_BYTES + 1),
    });
    expect(over.statusCode).toBe(413);
    expect(JSON.parse(over.body).errors[0]).toMatchObject({
      code: 'payload_too_large',
      detail: 'the body exceeds the limit of 1048576 bytes',
    });
    const at = await t.app.inject({
      method: 'POST',
      url: '/webhooks/inbound/slack',
      remoteAddress: '203.0.113.3',
      headers: { 'content-type': 'application/json' },
      payload: body(SLACK_MAX_BODY_BYTES),
    });
    expect(at.statusCode).toBe(401);
  });

  it('answers 413 for a Slack body streamed without a length once it passes 1 MiB', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/inbound/slack',
      remoteAddress: '203.0.113.4',
      headers: { 'content-type': 'application/json' },
      payload: streamedBody(SLACK_MAX_BODY_BYTES + 1),
    });
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(res.body).errors[0]).toMatchObject({ status: '413', code: 'payload_too_large' });
  });

  it('answers 413 for an email body declared over 36 MiB before reading it, on every email endpoint', async () => {
    expect(EMAIL_MAX_BODY_BYTES).toBe(36 * 1024 * 1024);
    for (const [index, path] of ['mailgun', 'mailgun/mime', 'postmark'].entries()) {
      // The declared length alone decides: the few bytes sent are never read.
      const res = await t.app.inject({
        method: 'POST',
        url: `/webhooks/inbound/${path}`,
        remoteAddress: `203.0.113.2${index}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(EMAIL_MAX_BODY_BYTES + 1) },
        payload: 'a=b',
      });
      expect(res.statusCode, path).toBe(413);
      expect(JSON.parse(res.body).errors[0]).toMatchObject({
        code: 'payload_too_large',
        detail: 'the body exceeds the limit of 37748736 bytes',
      });
    }
  });

  it('answers 413 for an email body streamed without a length once it passes 36 MiB, on every email endpoint, and reads one of exactly 36 MiB', async () => {
    for (const [index, path] of ['mailgun', 'mailgun/mime', 'postmark'].entries()) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/webhooks/inbound/${path}`,
        remoteAddress: `203.0.113.3${index}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: streamedBody(EMAIL_MAX_BODY_BYTES + 1),
      });
      expect(res.statusCode, path).toBe(413);
      expect(JSON.parse(res.body).errors[0]).toMatchObject({
        status: '413',
        code: 'payload_too_large',
        detail: 'the request body is too large',
      });
    }
    // At the cap the body is read and handed on: Postmark then checks its Basic credentials (none here).
    const at = await t.app.inject({
      method: 'POST',
      url: '/webhooks/inbound/postmark',
      remoteAddress: '203.0.113.40',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: streamedBody(EMAIL_MAX_BODY_BYTES),
    });
    expect(at.statusCode).toBe(401);
  });

  it('limits deliveries per source address across the platform endpoints, apart from other addresses', async () => {
    const from = (address: string, path: string) =>
      t.app.inject({
        method: 'POST',
        url: `/webhooks/inbound/${path}`,
        remoteAddress: address,
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
    const statuses = [];
    for (const path of ['postmark', 'mailgun', 'twilio', 'postmark']) statuses.push((await from('203.0.113.9', path)).statusCode);
    expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
    expect(statuses[3]).toBe(429);
    expect((await from('203.0.113.10', 'postmark')).statusCode).toBe(401);
    expect(await t.deps.db.selectFrom('executions').select('id').execute()).toEqual([]);
  });
});
