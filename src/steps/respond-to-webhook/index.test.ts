import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { respondToWebhookStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(respondToWebhookStep, mergeStepConfig(respondToWebhookStep, config));
const STATUS_SENTENCE = 'config.status must be an integer from 100 to 599 or a single {{ … }} expression.';

describe('respond_to_webhook step', () => {
  it('accepts its default config, which answers 200', () => {
    expect(respondToWebhookStep.defaultConfig).toEqual({ status: 200, headers: {} });
    expect(check({})).toEqual([]);
  });

  it('accepts one expression for status and headers, and any body', () => {
    expect(check({ status: '{{ nodes.lookup.status }}', headers: '{{ nodes.lookup.headers }}', body: '{{ nodes.lookup.body }}' })).toEqual(
      [],
    );
    expect(check({ status: 201, headers: { 'Content-Type': 'text/plain' }, body: 'created {{ trigger.body.id }}' })).toEqual([]);
  });

  it('rejects a status outside 100..599 with the limit it broke', () => {
    expect(check({ status: 99 })).toEqual([{ pointer: '/status', detail: 'config.status must be at least 100.' }]);
    expect(check({ status: 600 })).toEqual([{ pointer: '/status', detail: 'config.status must be at most 599.' }]);
  });

  it('rejects a status string that is not exactly one expression', () => {
    expect(check({ status: 'ok' })).toEqual([{ pointer: '/status', detail: STATUS_SENTENCE }]);
    expect(check({ status: '{{ a }}{{ b }}' })).toEqual([{ pointer: '/status', detail: STATUS_SENTENCE }]);
    expect(check({ status: '{{ }}' })).toEqual([{ pointer: '/status', detail: STATUS_SENTENCE }]);
  });

  it('rejects header values that are not strings', () => {
    expect(check({ headers: { 'Retry-After': 30 } })).toEqual([
      { pointer: '/headers/Retry-After', detail: 'config.headers.Retry-After must be a string.' },
    ]);
  });
});
