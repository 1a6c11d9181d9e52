import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { setStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(setStep, mergeStepConfig(setStep, config));

describe('set step', () => {
  it('accepts its default config, which sets nothing', () => {
    expect(setStep.defaultConfig).toEqual({ values: {} });
    expect(check({})).toEqual([]);
  });

  it('accepts values of any type, with expressions whole or inside strings', () => {
    expect(
      check({ values: { id: '{{ trigger.body.id }}', label: 'Order {{ trigger.body.id }}', count: 3, tags: ['a'], nested: { ok: true } } }),
    ).toEqual([]);
  });

  it('accepts values written as one expression yielding the object', () => {
    expect(check({ values: '{{ nodes.fetch.body }}' })).toEqual([]);
  });

  it('rejects values that are neither an object nor one expression, and unknown fields', () => {
    expect(check({ values: 'id' })).toEqual([
      { pointer: '/values', detail: 'config.values must be an object or a single {{ … }} expression.' },
    ]);
    expect(check({ values: [1] })).toEqual([
      { pointer: '/values', detail: 'config.values must be an object or a single {{ … }} expression.' },
    ]);
    expect(check({ keep_input: true })).toEqual([{ pointer: '/keep_input', detail: 'config.keep_input is not a known field.' }]);
  });
});
