import { describe, expect, it } from 'vitest';
import { mergeStepConfig, validateStepConfig } from '../validate-step-config.js';
import { loopStep } from './index.js';

const check = (config: Record<string, unknown>) => validateStepConfig(loopStep, mergeStepConfig(loopStep, config));
const ITEMS_SENTENCE = 'config.items must be an array or a single {{ … }} expression.';

describe('loop step', () => {
  it('has a body and a done port', () => {
    expect(loopStep.ports).toEqual({ in: ['in'], out: ['body', 'done'] });
  });

  it('requires items, which the default config leaves out', () => {
    expect(check({})).toEqual([{ pointer: '/items', detail: 'config.items is required.' }]);
  });

  it('accepts one expression or a fixed array', () => {
    expect(check({ items: '{{ nodes.fetch.body.orders }}' })).toEqual([]);
    expect(check({ items: [1, { id: 2 }] })).toEqual([]);
  });

  it('rejects a plain string, text around an expression, an object and a concurrency setting', () => {
    expect(check({ items: 'orders' })).toEqual([{ pointer: '/items', detail: ITEMS_SENTENCE }]);
    expect(check({ items: 'x {{ a }}' })).toEqual([{ pointer: '/items', detail: ITEMS_SENTENCE }]);
    expect(check({ items: { a: 1 } })).toEqual([{ pointer: '/items', detail: ITEMS_SENTENCE }]);
    expect(check({ items: [], concurrency: 4 })).toEqual([{ pointer: '/concurrency', detail: 'config.concurrency is not a known field.' }]);
  });
});
