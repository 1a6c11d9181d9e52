import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { webhookStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(webhookStep, mergeStepConfig(webhookStep, config));

describe('webhook step', () => {
  it('is a trigger with no in port and one out port', () => {
    expect(webhookStep.trigger).toBe(true);
    expect(webhookStep.ports).toEqual({ in: [], out: ['out'] });
  });

  it('accepts its default config, which verifies with a bearer token', () => {
    expect(check({})).toEqual([]);
    expect(webhookStep.defaultConfig).toEqual({
      response_mode: 'immediate',
      verification: { method: 'bearer' },
      timeout_ms: 30000,
      max_body_bytes: 1048576,
    });
  });

  it('accepts hmac verification in each format and an explicit none', () => {
    expect(check({ verification: { method: 'hmac', format: 'github', secret: 's3cret' } })).toEqual([]);
    expect(check({ verification: { method: 'hmac', format: 'stripe', secret: 'whsec_x' } })).toEqual([]);
    expect(check({ verification: { method: 'hmac', format: 'plain', header: 'X-Signature', secret: 's' } })).toEqual([]);
    expect(check({ verification: { method: 'none' } })).toEqual([]);
  });

  it('accepts the service-assigned webhook_id, webhook_url and webhook_unauthenticated', () => {
    expect(check({ webhook_id: 'wh_1', webhook_url: 'http://127.0.0.1:8080/webhooks/wh_1', webhook_unauthenticated: true })).toEqual([]);
  });

  it('requires a header for plain hmac; the write-only secret may be omitted to keep the stored one', () => {
    expect(check({ verification: { method: 'hmac', format: 'plain' } })).toEqual([
      { pointer: '/verification/header', detail: 'config.verification.header is required.' },
    ]);
    expect(check({ verification: { method: 'hmac', format: 'github' } })).toEqual([]);
  });

  it('rejects an unknown verification method and fields of another method', () => {
    expect(check({ verification: { method: 'basic' } })).toEqual([
      { pointer: '/verification/method', detail: 'config.verification.method must be one of "bearer", "hmac", "none".' },
    ]);
    expect(check({ verification: { method: 'bearer', secret: 'x' } })).toEqual([
      { pointer: '/verification/secret', detail: 'config.verification.secret is not a known field.' },
    ]);
  });

  it('rejects an unknown response mode and out-of-range limits', () => {
    expect(check({ response_mode: 'later', timeout_ms: 300001, max_body_bytes: 16 * 1024 * 1024 + 1 })).toEqual([
      { pointer: '/response_mode', detail: 'config.response_mode must be one of "immediate", "last_step", "respond_step".' },
      { pointer: '/timeout_ms', detail: 'config.timeout_ms must be at most 300000.' },
      { pointer: '/max_body_bytes', detail: 'config.max_body_bytes must be at most 16777216.' },
    ]);
    expect(check({ timeout_ms: 1.5 })).toEqual([{ pointer: '/timeout_ms', detail: 'config.timeout_ms must be an integer.' }]);
  });
});
