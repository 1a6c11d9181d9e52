import { createHmac } from 'node:crypto';
import { sign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { verifyDelivery, type Verification } from './verify-delivery.js';

const SECRET = "It's a Secret to Everybody";
const NOW = Date.UTC(2026, 0, 1);
const payload = JSON.stringify({ action: 'opened', number: 7, title: 'Grüße ✓' });
const body = Buffer.from(payload);
/** Bytes that are not UTF-8: a lone continuation byte, an invalid lead byte, a truncated sequence. */
const binary = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0xe2, 0x82, 0x7d]);

function flipOneByte(bytes: Buffer, index: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[index] = copy[index]! ^ 0x01;
  return copy;
}

describe('hmac verification, github format', () => {
  const github: Verification = { method: 'hmac', format: 'github', secret: SECRET };
  const check = (rawHeaders: string[], delivered: Buffer = body, v: Verification = github) => verifyDelivery(v, rawHeaders, delivered, NOW);

  it('accepts a delivery signed by @octokit/webhooks-methods (and octokit verifies the same header)', async () => {
    const signature = await sign(SECRET, payload);
    expect(await octokitVerify(SECRET, payload, signature)).toBe(true);
    expect(check(['Content-Type', 'application/json', 'X-Hub-Signature-256', signature])).toEqual({ ok: true });
  });

  it('accepts the header name in any case and the hex in uppercase', async () => {
    const signature = await sign(SECRET, payload);
    expect(check(['x-hub-signature-256', signature])).toEqual({ ok: true });
    expect(check(['X-HUB-SIGNATURE-256', `sha256=${signature.slice(7).toUpperCase()}`])).toEqual({ ok: true });
  });

  it('refuses a signature made with another secret', async () => {
    expect(check(['X-Hub-Signature-256', await sign('another secret', payload)])).toEqual({
      ok: false,
      reason: 'signature does not match',
    });
  });

  it('refuses a body altered in one byte', async () => {
    const signature = await sign(SECRET, payload);
    expect(check(['X-Hub-Signature-256', signature], flipOneByte(body, 0))).toEqual({ ok: false, reason: 'signature does not match' });
    expect(check(['X-Hub-Signature-256', signature], flipOneByte(body, body.length - 1))).toEqual({
      ok: false,
      reason: 'signature does not match',
    });
  });

  it('checks the raw bytes of a body that is not UTF-8', async () => {
    // octokit signs strings only (a Buffer is a TypeError), so the bytes are signed with node:crypto.
    const signature = `sha256=${createHmac('sha256', SECRET).update(binary).digest('hex')}`;
    expect(check(['X-Hub-Signature-256', signature], binary)).toEqual({ ok: true });
    // Signing the body decoded as UTF-8 replaces the bad bytes with U+FFFD: a different text.
    const overDecoded = await sign(SECRET, binary.toString('utf8'));
    expect(overDecoded).not.toBe(signature);
    expect(check(['X-Hub-Signature-256', overDecoded], binary)).toEqual({ ok: false, reason: 'signature does not match' });
  });

  it('refuses a missing signature header, even when the legacy SHA-1 header is present', () => {
    const sha1 = `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`;
    expect(check(['X-Hub-Signature', sha1])).toEqual({ ok: false, reason: 'missing header x-hub-signature-256' });
  });

  it('refuses two X-Hub-Signature-256 lines, in any case, even when one is right', async () => {
    const signature = await sign(SECRET, payload);
    const reason = 'header x-hub-signature-256 appears 2 times';
    expect(check(['X-Hub-Signature-256', signature, 'X-Hub-Signature-256', signature])).toEqual({ ok: false, reason });
    expect(check(['X-Hub-Signature-256', `sha256=${'0'.repeat(64)}`, 'x-hub-signature-256', signature])).toEqual({ ok: false, reason });
  });

  const BAD_PREFIX = 'x-hub-signature-256 does not start with "sha256="';
  const BAD_HEX = 'x-hub-signature-256 is not 64 hex digits after "sha256="';
  it.each([
    ['an empty value', () => '', BAD_PREFIX],
    ['the sha1 prefix', (hex: string) => `sha1=${hex}`, BAD_PREFIX],
    ['an uppercase prefix', (hex: string) => `SHA256=${hex}`, BAD_PREFIX],
    ['no prefix', (hex: string) => hex, BAD_PREFIX],
    ['a space after the prefix', (hex: string) => `sha256= ${hex}`, BAD_HEX],
    ['odd-length hex (one digit extra)', (hex: string) => `sha256=${hex}0`, BAD_HEX],
    ['odd-length hex (one digit short)', (hex: string) => `sha256=${hex.slice(0, 63)}`, BAD_HEX],
    ['non-hex after the digest', (hex: string) => `sha256=${hex}zz`, BAD_HEX],
    ['a non-hex digit', (hex: string) => `sha256=${hex.slice(0, 63)}g`, BAD_HEX],
    ['the prefix alone', () => 'sha256=', BAD_HEX],
  ])('refuses a malformed header: %s', async (_name, make, reason) => {
    const hex = (await sign(SECRET, payload)).slice('sha256='.length);
    expect(check(['X-Hub-Signature-256', make(hex)])).toEqual({ ok: false, reason });
  });

  it('fails closed on an empty secret', () => {
    const signature = `sha256=${createHmac('sha256', '').update(body).digest('hex')}`;
    expect(check(['X-Hub-Signature-256', signature], body, { method: 'hmac', format: 'github', secret: '' })).toEqual({
      ok: false,
      reason: 'configured HMAC secret is empty',
    });
  });

  it('ignores a configured header name (GitHub fixes its own)', async () => {
    const v: Verification = { method: 'hmac', format: 'github', secret: SECRET, header: 'X-Custom' };
    const signature = await sign(SECRET, payload);
    expect(check(['X-Hub-Signature-256', signature], body, v)).toEqual({ ok: true });
    expect(check(['X-Custom', signature], body, v)).toEqual({ ok: false, reason: 'missing header x-hub-signature-256' });
  });
});

describe('hmac verification, plain format', () => {
  const plain: Verification = { method: 'hmac', format: 'plain', header: 'X-Signature', secret: SECRET };
  const hexOf = (bytes: Buffer, secret = SECRET) => createHmac('sha256', secret).update(bytes).digest('hex');
  const check = (rawHeaders: string[], delivered: Buffer = body, v: Verification = plain) => verifyDelivery(v, rawHeaders, delivered, NOW);

  it.each([
    ['lowercase hex', (hex: string) => hex],
    ['uppercase hex', (hex: string) => hex.toUpperCase()],
    ['a sha256= prefix', (hex: string) => `sha256=${hex}`],
    ['an uppercase SHA256= prefix', (hex: string) => `SHA256=${hex.toUpperCase()}`],
  ])('accepts %s, cross-checked against node:crypto', (_name, make) => {
    expect(check(['X-Signature', make(hexOf(body))])).toEqual({ ok: true });
  });

  it('matches the configured header name case-insensitively', () => {
    expect(check(['x-signature', hexOf(body)])).toEqual({ ok: true });
    expect(check(['X-SIGNATURE', hexOf(body)], body, { ...plain, header: 'x-SiGnAtUrE' })).toEqual({ ok: true });
  });

  it('agrees with a GitHub signature from octokit placed in the plain header', async () => {
    expect(check(['X-Signature', await sign(SECRET, payload)])).toEqual({ ok: true });
  });

  it('refuses a signature made with another secret', () => {
    expect(check(['X-Signature', hexOf(body, 'another secret')])).toEqual({ ok: false, reason: 'signature does not match' });
  });

  it('refuses a body altered in one byte', () => {
    expect(check(['X-Signature', hexOf(body)], flipOneByte(body, 5))).toEqual({ ok: false, reason: 'signature does not match' });
  });

  it('checks the raw bytes of a body that is not UTF-8', () => {
    expect(check(['X-Signature', hexOf(binary)], binary)).toEqual({ ok: true });
    expect(check(['X-Signature', hexOf(Buffer.from(binary.toString('utf8')))], binary)).toEqual({
      ok: false,
      reason: 'signature does not match',
    });
  });

  it('refuses a missing header, and a signature sent in another header', () => {
    expect(check(['X-Hub-Signature-256', `sha256=${hexOf(body)}`])).toEqual({ ok: false, reason: 'missing header x-signature' });
  });

  it('refuses two signature lines even when one is right', () => {
    expect(check(['X-Signature', hexOf(body), 'x-signature', hexOf(body, 'forged')])).toEqual({
      ok: false,
      reason: 'header x-signature appears 2 times',
    });
  });

  it.each([
    ['an empty value', () => ''],
    ['another prefix', (hex: string) => `sha1=${hex}`],
    ['a prefix without "="', (hex: string) => `sha256${hex}`],
    ['odd-length hex', (hex: string) => `${hex}0`],
    ['non-hex after the digest', (hex: string) => `${hex}zz`],
    ['a non-hex digit', (hex: string) => `x${hex.slice(1)}`],
    ['a doubled prefix', (hex: string) => `sha256=sha256=${hex}`],
  ])('refuses a malformed header: %s', (_name, make) => {
    expect(check(['X-Signature', make(hexOf(body))])).toEqual({
      ok: false,
      reason: 'x-signature is not 64 hex digits (optionally after "sha256=")',
    });
  });

  it('fails closed when no header is configured or the secret is empty', () => {
    expect(check(['X-Signature', hexOf(body)], body, { method: 'hmac', format: 'plain', secret: SECRET })).toEqual({
      ok: false,
      reason: 'plain HMAC verification has no header configured',
    });
    expect(check(['X-Signature', hexOf(body, '')], body, { ...plain, secret: '' })).toEqual({
      ok: false,
      reason: 'configured HMAC secret is empty',
    });
  });
});
