import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../lib/secrets.js';
import { verifyDelivery, type Verification } from './verify-delivery.js';

const TOKEN = 'whk_3fZ9qLmN0pRsTuVwXyZaBcDe';
const verification: Verification = { method: 'bearer', tokenHash: sha256Hex(TOKEN) };
const NOW = Date.UTC(2026, 0, 1);
const body = Buffer.from('{"hello":"world"}');

function verify(rawHeaders: string[], v: Verification = verification) {
  return verifyDelivery(v, rawHeaders, body, NOW);
}

describe('bearer verification', () => {
  it('accepts the minted token', () => {
    expect(verify(['Host', 'example.test', 'Authorization', `Bearer ${TOKEN}`])).toEqual({ ok: true });
  });

  it.each([
    ['lowercase scheme', `bearer ${TOKEN}`],
    ['uppercase scheme', `BEARER ${TOKEN}`],
    ['surrounding whitespace', ` \tBearer ${TOKEN} \t`],
  ])('accepts %s', (_name, value) => {
    expect(verify(['authorization', value])).toEqual({ ok: true });
  });

  it('accepts a header name in any case', () => {
    expect(verify(['AUTHORIZATION', `Bearer ${TOKEN}`])).toEqual({ ok: true });
  });

  it('matches a token hash stored in uppercase hex (digests compare as bytes)', () => {
    expect(verify(['authorization', `Bearer ${TOKEN}`], { method: 'bearer', tokenHash: sha256Hex(TOKEN).toUpperCase() })).toEqual({
      ok: true,
    });
  });

  it('refuses a wrong token', () => {
    expect(verify(['authorization', `Bearer ${TOKEN}x`])).toEqual({ ok: false, reason: 'bearer token does not match' });
    expect(verify(['authorization', `Bearer ${TOKEN.slice(0, -1)}`])).toEqual({ ok: false, reason: 'bearer token does not match' });
  });

  it('refuses the token hash itself sent as the token', () => {
    expect(verify(['authorization', `Bearer ${sha256Hex(TOKEN)}`])).toEqual({ ok: false, reason: 'bearer token does not match' });
  });

  it.each([
    ['another scheme', `Basic ${TOKEN}`],
    ['a scheme prefixed by bearer', `Bearerx ${TOKEN}`],
    ['no scheme', TOKEN],
    ['two spaces after the scheme', `Bearer  ${TOKEN}`],
    ['a tab after the scheme', `Bearer\t${TOKEN}`],
    ['no token', 'Bearer'],
    ['a token with inner whitespace', `Bearer ${TOKEN} extra`],
    ['an empty value', ''],
  ])('refuses %s', (_name, value) => {
    expect(verify(['authorization', value])).toEqual({ ok: false, reason: 'authorization header is not "Bearer <token>"' });
  });

  it('refuses a missing Authorization header', () => {
    expect(verify(['Host', 'example.test'])).toEqual({ ok: false, reason: 'missing header authorization' });
  });

  it('refuses two Authorization lines even when one carries the right token', () => {
    const reason = 'header authorization appears 2 times';
    expect(verify(['Authorization', `Bearer ${TOKEN}`, 'Authorization', 'Bearer other'])).toEqual({ ok: false, reason });
    expect(verify(['authorization', 'Bearer other', 'AUTHORIZATION', `Bearer ${TOKEN}`])).toEqual({ ok: false, reason });
    expect(verify(['Authorization', `Bearer ${TOKEN}`, 'authorization', `Bearer ${TOKEN}`])).toEqual({ ok: false, reason });
  });

  it('fails closed when the stored token hash is not a SHA-256 hex digest', () => {
    for (const tokenHash of ['', TOKEN, sha256Hex(TOKEN).slice(1)]) {
      expect(verify(['authorization', `Bearer ${TOKEN}`], { method: 'bearer', tokenHash })).toEqual({
        ok: false,
        reason: 'configured bearer token hash is not a SHA-256 hex digest',
      });
    }
  });
});
