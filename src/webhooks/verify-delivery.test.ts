import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../lib/secrets.js';
import { WEBHOOK_HMAC_FORMATS } from '../steps/webhook/index.js';
import { credentialHeaders, HMAC_FORMATS, verifyDelivery, type Verification } from './verify-delivery.js';

const NOW = Date.UTC(2026, 0, 1);

const bearer: Verification = { method: 'bearer', tokenHash: sha256Hex('whk_token') };
const github: Verification = { method: 'hmac', format: 'github', secret: 's3cret' };
const stripe: Verification = { method: 'hmac', format: 'stripe', secret: 'whsec_s3cret' };
const plain: Verification = { method: 'hmac', format: 'plain', header: 'X-Acme-Signature', secret: 's3cret' };

describe('verifyDelivery', () => {
  it('accepts anything under method none, even with no headers and credentials duplicated', () => {
    expect(verifyDelivery({ method: 'none' }, [], Buffer.alloc(0), NOW)).toEqual({ ok: true });
    expect(verifyDelivery({ method: 'none' }, ['Authorization', 'a', 'authorization', 'b'], Buffer.from([0xff]), NOW)).toEqual({
      ok: true,
    });
  });

  it('lists the same HMAC formats as the webhook step schema', () => {
    expect(HMAC_FORMATS).toEqual(WEBHOOK_HMAC_FORMATS);
  });

  it('fails closed on stored verification of an unknown or wrong shape', () => {
    const body = Buffer.from('{}');
    expect(verifyDelivery({ method: 'mtls' } as unknown as Verification, [], body, NOW)).toEqual({
      ok: false,
      reason: 'unknown verification method or format',
    });
    expect(verifyDelivery({ method: 'hmac', format: 'slack', secret: 's' } as unknown as Verification, [], body, NOW)).toEqual({
      ok: false,
      reason: 'unknown verification method or format',
    });
    expect(verifyDelivery({ method: 'hmac', format: 'github', secret: null } as unknown as Verification, [], body, NOW)).toEqual({
      ok: false,
      reason: 'configured HMAC secret is empty',
    });
    expect(verifyDelivery(null as unknown as Verification, [], body, NOW)).toEqual({ ok: false, reason: 'verification threw' });
  });

  it('never throws and never accepts random header values and bodies', () => {
    const random = mulberry32(20260101);
    const names = ['Authorization', 'x-hub-signature-256', 'STRIPE-SIGNATURE', 'X-Acme-Signature', 'Host'];
    const fragments = [
      'Bearer ',
      'bearer',
      'sha256=',
      't=',
      'v1=',
      'v0=',
      ',',
      '=',
      ' ',
      '\t',
      '0',
      '1767225600',
      'ff',
      'zz',
      '\u00ff',
      '\u0000',
      '\ud800',
      'a'.repeat(64),
    ];
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    for (let round = 0; round < 400; round += 1) {
      const rawHeaders: string[] = [];
      const count = Math.floor(random() * 4);
      for (let i = 0; i < count; i += 1) {
        let value = '';
        for (let j = Math.floor(random() * 8); j > 0; j -= 1) value += pick(fragments);
        rawHeaders.push(pick(names), value);
      }
      const body = Buffer.from(Array.from({ length: Math.floor(random() * 32) }, () => Math.floor(random() * 256)));
      for (const verification of [bearer, github, stripe, plain]) {
        const result = verifyDelivery(verification, rawHeaders, body, NOW);
        expect(result.ok).toBe(false);
        expect(result.ok === false && result.reason.length > 0).toBe(true);
      }
    }
  });
});

describe('credentialHeaders', () => {
  it('names no header for method none', () => {
    expect(credentialHeaders({ method: 'none' })).toEqual([]);
  });

  it('names authorization for bearer', () => {
    expect(credentialHeaders(bearer)).toEqual(['authorization']);
  });

  it('names both GitHub signature headers, the checked SHA-256 one and the legacy SHA-1 one', () => {
    expect(credentialHeaders(github)).toEqual(['x-hub-signature-256', 'x-hub-signature']);
  });

  it('names stripe-signature for stripe', () => {
    expect(credentialHeaders(stripe)).toEqual(['stripe-signature']);
  });

  it('names the configured header, lowercased, for plain', () => {
    expect(credentialHeaders(plain)).toEqual(['x-acme-signature']);
    expect(credentialHeaders({ method: 'hmac', format: 'plain', secret: 's' })).toEqual([]);
  });

  it('ignores a header configured on github or stripe', () => {
    expect(credentialHeaders({ ...github, header: 'X-Other' })).toEqual(['x-hub-signature-256', 'x-hub-signature']);
    expect(credentialHeaders({ ...stripe, header: 'X-Other' })).toEqual(['stripe-signature']);
  });
});

/** A small seeded PRNG, so a failing round can be replayed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
