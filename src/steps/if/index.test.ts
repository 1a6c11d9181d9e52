import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { ifStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(ifStep, mergeStepConfig(ifStep, config));
const CONDITION_SENTENCE = 'config.condition must be a boolean or a single {{ … }} expression.';

describe('if step', () => {
  it('has a true and a false port', () => {
    expect(ifStep.ports).toEqual({ in: ['in'], out: ['true', 'false'] });
  });

  it('requires a condition, which the default config leaves out', () => {
    expect(check({})).toEqual([{ pointer: '/condition', detail: 'config.condition is required.' }]);
  });

  it('accepts one expression or a fixed boolean', () => {
    expect(check({ condition: '{{ trigger.body.amount > 100 }}' })).toEqual([]);
    expect(check({ condition: false })).toEqual([]);
  });

  it('rejects a plain string, which would always count as true, and text around an expression', () => {
    expect(check({ condition: 'trigger.body.ok' })).toEqual([{ pointer: '/condition', detail: CONDITION_SENTENCE }]);
    expect(check({ condition: 'ok: {{ trigger.body.ok }}' })).toEqual([{ pointer: '/condition', detail: CONDITION_SENTENCE }]);
    expect(check({ condition: 1 })).toEqual([{ pointer: '/condition', detail: CONDITION_SENTENCE }]);
  });
});
