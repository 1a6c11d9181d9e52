import { describe, expect, it } from 'vitest';
import type { StepRunContext } from '../step-runtime.js';
import { jsonEqual, runSwitch } from './run-switch.js';
import { stepContext } from '../../../test/support/step-context.js';

const input = { order: 7 };
const cases = [
  { port: 'refund', equals: 'refund.created' },
  { port: 'paid', equals: { status: 'paid', amount: 5 } },
  { port: 'nothing', equals: null },
  { port: 'again', equals: 'refund.created' },
];

function contextFor(config: Record<string, unknown>): StepRunContext {
  return stepContext({ nodeId: 'route', config, input });
}

const portFor = async (value: unknown, list: unknown = cases) => (await runSwitch(contextFor({ value, cases: list }))).ports;

describe('runSwitch', () => {
  it('passes the input on through the port of the first equal case', async () => {
    expect(await runSwitch(contextFor({ value: 'refund.created', cases }))).toEqual({ output: input, ports: ['refund'] });
  });

  it('compares objects field by field, whatever the key order', async () => {
    expect(await portFor({ amount: 5, status: 'paid' })).toEqual(['paid']);
    expect(await portFor({ amount: 5, status: 'paid', extra: true })).toEqual(['default']);
  });

  it('matches null, and a missing value as null', async () => {
    expect(await portFor(null)).toEqual(['nothing']);
    expect(await portFor(undefined)).toEqual(['nothing']);
  });

  it('takes default when no case is equal, or there are no cases', async () => {
    expect(await portFor('charge.failed')).toEqual(['default']);
    expect(await portFor('refund.created', [])).toEqual(['default']);
  });

  it('does not convert types: "1" is not 1', async () => {
    expect(await portFor('1', [{ port: 'one', equals: 1 }])).toEqual(['default']);
  });
});

describe('jsonEqual', () => {
  it('treats 0 and -0 as the same number and compares arrays in order', () => {
    expect(jsonEqual(0, -0)).toBe(true);
    expect(jsonEqual([1, [2, { a: 3 }]], [1, [2, { a: 3 }]])).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual({ a: 1 }, { b: 1 })).toBe(false);
  });
});
