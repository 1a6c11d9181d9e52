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

  it('accepts time and memory limits up to 60 s and 256 MiB, both optional', () => {
    expect(check({ timeout_ms: 1, memory_mb: 1 })).toEqual([]);
    expect(check({ timeout_ms: 60_000, memory_mb: 256 })).toEqual([]);
  });

  it('rejects limits out of range or not whole numbers', () => {
    expect(check({ timeout_ms: 0, memory_mb: 257 })).toEqual([
      { pointer: '/timeout_ms', detail: 'config.timeout_ms must be at least 1.' },
      { pointer: '/memory_mb', detail: 'config.memory_mb must be at most 256.' },
    ]);
    expect(check({ timeout_ms: 60_001, memory_mb: 0 })).toEqual([
      { pointer: '/timeout_ms', detail: 'config.timeout_ms must be at most 60000.' },
      { pointer: '/memory_mb', detail: 'config.memory_mb must be at least 1.' },
    ]);
    expect(check({ timeout_ms: 1.5, memory_mb: '64' })).toEqual([
      { pointer: '/timeout_ms', detail: 'config.timeout_ms must be an integer.' },
      { pointer: '/memory_mb', detail: 'config.memory_mb must be an integer.' },
    ]);
  });

  it('rejects fields it does not know', () => {
    expect(check({ language: 'python' })).toEqual([{ pointer: '/language', detail: 'config.language is not a known field.' }]);
  });
});
