import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { STRIPE_TOLERANCE_SECONDS, verifyDelivery, type Verification } from './verify-delivery.js';

const SECRET = 'whsec_test_3fZ9qLmN0pRsTuVw';
const OLD_SECRET = 'whsec_test_rotated_out';
/** 2026-01-01T00:00:00Z in unix seconds. */
const T = 1_767_225_600;
const AT_T = T * 1000;
const payload = JSON.stringify({ id: 'evt_1', object: 'event', type: 'invoice.paid', data: { note: 'Grüße ✓' } });
const body = Buffer.from(payload);
const stripe: Verification = { method: 'hmac', format: 'stripe', secret: SECRET };

function header(options: { secret?: string; timestamp?: number; scheme?: string; body?: string } = {}): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload: options.body ?? payload,
    secret: options.secret ?? SECRET,
    timestamp: options.timestamp ?? T,
    ...(options.scheme ? { scheme: options.scheme } : {}),
  });
}

/** The `v1=…` item of a header made by the Stripe library. */
function v1Of(value: string): string {
  const item = value.split(',').find((part) => part.startsWith('v1='));
  if (!item) throw new Error(`no v1 in ${value}`);
  return item;
}

function check(rawHeaders: string[], nowMs = AT_T, delivered: Buffer = body, v: Verification = stripe) {
  return verifyDelivery(v, rawHeaders, delivered, nowMs);
}

describe('hmac verification, stripe format', () => {
  it('accepts a delivery signed by the stripe library (which also accepts it)', () => {
    const value = header();
    expect(() => Stripe.webhooks.constructEvent(payload, value, SECRET, STRIPE_TOLERANCE_SECONDS, undefined, AT_T)).not.toThrow();
    expect(check(['Content-Type', 'application/json', 'Stripe-Signature', value])).toEqual({ ok: true });
    expect(check(['stripe-signature', value])).toEqual({ ok: true });
  });

  it('refuses a signature made with another secret', () => {
    expect(check(['Stripe-Signature', header({ secret: OLD_SECRET })])).toEqual({ ok: false, reason: 'no v1 signature matches' });
  });

  it('refuses a body altered in one byte', () => {
    const altered = Buffer.from(body);
    altered[10] = altered[10]! ^ 0x01;
    expect(check(['Stripe-Signature', header()], AT_T, altered)).toEqual({ ok: false, reason: 'no v1 signature matches' });
  });

  it('refuses a signature moved to another timestamp', () => {
    const moved = header().replace(`t=${T}`, `t=${T + 1}`);
    expect(check(['Stripe-Signature', moved], AT_T)).toEqual({ ok: false, reason: 'no v1 signature matches' });
  });

  describe(`the ${STRIPE_TOLERANCE_SECONDS} s window, against the injected clock`, () => {
    const window = STRIPE_TOLERANCE_SECONDS * 1000;
    const value = header();
    const stale = { ok: false, reason: `timestamp ${T} is more than 300 s from now` };

    it('accepts a timestamp exactly at the edge in either direction', () => {
      expect(check(['Stripe-Signature', value], AT_T + window)).toEqual({ ok: true });
      expect(check(['Stripe-Signature', value], AT_T - window)).toEqual({ ok: true });
    });

    it('accepts a timestamp just inside the window in either direction', () => {
      expect(check(['Stripe-Signature', value], AT_T + window - 1)).toEqual({ ok: true });
      expect(check(['Stripe-Signature', value], AT_T - window + 1)).toEqual({ ok: true });
    });

    it('refuses a stale timestamp just outside the window', () => {
      expect(check(['Stripe-Signature', value], AT_T + window + 1)).toEqual(stale);
      expect(check(['Stripe-Signature', value], AT_T + window + 1000)).toEqual(stale);
    });

    it('refuses a future timestamp just outside the window', () => {
      expect(check(['Stripe-Signature', value], AT_T - window - 1)).toEqual(stale);
      expect(check(['Stripe-Signature', value], AT_T - window - 1000)).toEqual(stale);
    });

    it('refuses when the clock reading is not a number', () => {
      expect(check(['Stripe-Signature', value], Number.NaN)).toEqual(stale);
    });
  });

  describe('several v1 signatures (secret rotation)', () => {
    const oldV1 = v1Of(header({ secret: OLD_SECRET }));
    const newV1 = v1Of(header());

    it('accepts when only the second v1 matches', () => {
      expect(check(['Stripe-Signature', `t=${T},${oldV1},${newV1}`])).toEqual({ ok: true });
    });

    it('accepts when only the first v1 matches', () => {
      expect(check(['Stripe-Signature', `t=${T},${newV1},${oldV1}`])).toEqual({ ok: true });
    });

    it('refuses when no v1 matches', () => {
      const otherV1 = v1Of(header({ secret: 'whsec_neither' }));
      expect(check(['Stripe-Signature', `t=${T},${oldV1},${otherV1}`])).toEqual({ ok: false, reason: 'no v1 signature matches' });
    });
  });

  describe('other schemes', () => {
    it('ignores v0 items, whatever they hold', () => {
      expect(check(['Stripe-Signature', `t=${T},v0=not-hex-at-all,${v1Of(header())}`])).toEqual({ ok: true });
      expect(check(['Stripe-Signature', `t=${T},${v1Of(header())},v0=`])).toEqual({ ok: true });
    });

    it('refuses a correct signature carried under v0 only', () => {
      expect(check(['Stripe-Signature', header({ scheme: 'v0' })])).toEqual({ ok: false, reason: 'stripe-signature has no v1 signature' });
    });
  });

  it('checks the raw bytes of a body that is not UTF-8', () => {
    const binary = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x7d]);
    const signature = createHmac('sha256', SECRET).update(`${T}.`).update(binary).digest('hex');
    // The library formats the header around a signature it is handed.
    const value = Stripe.webhooks.generateTestHeaderString({ payload: '', secret: SECRET, timestamp: T, signature });
    expect(check(['Stripe-Signature', value], AT_T, binary)).toEqual({ ok: true });
    expect(check(['Stripe-Signature', header({ body: binary.toString('utf8') })], AT_T, binary)).toEqual({
      ok: false,
      reason: 'no v1 signature matches',
    });
  });

  it('refuses a missing Stripe-Signature header', () => {
    expect(check(['Content-Type', 'application/json'])).toEqual({ ok: false, reason: 'missing header stripe-signature' });
  });

  it('refuses two Stripe-Signature lines even when one is right', () => {
    const reason = 'header stripe-signature appears 2 times';
    expect(check(['Stripe-Signature', header(), 'Stripe-Signature', header()])).toEqual({ ok: false, reason });
    expect(check(['stripe-signature', `t=${T},v1=${'0'.repeat(64)}`, 'STRIPE-SIGNATURE', header()])).toEqual({ ok: false, reason });
  });

  describe('malformed headers', () => {
    const v1 = v1Of(header());
    const hex = v1.slice(3);
    const NOT_KEY_VALUE = 'stripe-signature has an item that is not key=value';
    const BAD_V1 = 'stripe-signature has a v1 that is not 64 hex digits';
    const NOT_SECONDS = 'stripe-signature t is not unix seconds';
    const NO_V1 = 'stripe-signature has no v1 signature';

    it.each([
      ['an empty value', '', NOT_KEY_VALUE],
      ['a bare word', 'garbage', NOT_KEY_VALUE],
      ['an empty item', `t=${T},,${v1}`, NOT_KEY_VALUE],
      ['a trailing comma', `t=${T},${v1},`, NOT_KEY_VALUE],
      ['an item with an empty key', `t=${T},=x,${v1}`, NOT_KEY_VALUE],
      ['no t', v1, 'stripe-signature must have exactly one t (has 0)'],
      ['two equal t', `t=${T},t=${T},${v1}`, 'stripe-signature must have exactly one t (has 2)'],
      ['two different t', `t=${T},${v1},t=${T + 1}`, 'stripe-signature must have exactly one t (has 2)'],
      ['an empty t', `t=,${v1}`, NOT_SECONDS],
      ['a non-numeric t', `t=abc,${v1}`, NOT_SECONDS],
      ['a negative t', `t=-${T},${v1}`, NOT_SECONDS],
      ['a fractional t', `t=${T}.5,${v1}`, NOT_SECONDS],
      ['a t with leading zeros', `t=0${T},${v1}`, NOT_SECONDS],
      ['a t in milliseconds beyond 15 digits', `t=${T}000000,${v1}`, NOT_SECONDS],
      ['no v1', `t=${T}`, NO_V1],
      ['a space before v1 (Stripe sends none)', `t=${T}, ${v1}`, NO_V1],
      ['a capitalised V1', `t=${T},V1=${hex}`, NO_V1],
      ['an empty v1', `t=${T},v1=`, BAD_V1],
      ['odd-length v1 (one digit extra)', `t=${T},${v1}0`, BAD_V1],
      ['odd-length v1 (one digit short)', `t=${T},${v1.slice(0, -1)}`, BAD_V1],
      ['non-hex after the v1 digest', `t=${T},${v1}zz`, BAD_V1],
      ['a malformed v1 beside a correct one', `t=${T},${v1},v1=xyz`, BAD_V1],
    ])('refuses %s', (_name, value, reason) => {
      expect(check(['Stripe-Signature', value])).toEqual({ ok: false, reason });
    });
  });

  it('accepts v1 hex in uppercase (digests compare as bytes)', () => {
    expect(check(['Stripe-Signature', `t=${T},v1=${v1Of(header()).slice(3).toUpperCase()}`])).toEqual({ ok: true });
  });

  it('fails closed on an empty secret', () => {
    expect(check(['Stripe-Signature', header()], AT_T, body, { method: 'hmac', format: 'stripe', secret: '' })).toEqual({
      ok: false,
      reason: 'configured HMAC secret is empty',
    });
  });
});
