import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { codeStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(codeStep, mergeStepConfig(codeStep, config));

describe('code step', () => {
  it('accepts its default config, which returns its input unchanged', () => {
    expect(codeStep.defaultConfig).toEqual({ code: 'return input;' });
    expect(check({})).toEqual([]);
  });

  it('rejects empty or non-string code', () => {
    expect(check({ code: '' })).toEqual([{ pointer: '/code', detail: 'config.code must not be empty.' }]);
    expect(check({ code: 42 })).toEqual([{ pointer: '/code', detail: 'config.code must be a string.' }]);
  });

  it('rejects fields it does not know', () => {
    expect(check({ language: 'python' })).toEqual([
      { pointer: '/language', detail: 'config.language is not a known field.' },
    ]);
  });
});
