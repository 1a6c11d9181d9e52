import { describe, expect, it } from 'vitest';
import type { StepRunContext } from '../step-runtime.js';
import { runIf } from './run-if.js';
import { stepContext } from '../../../test/support/step-context.js';

const input = { order: 7 };

function contextFor(condition: unknown): StepRunContext {
  return stepContext({ nodeId: 'branch', config: { condition }, input });
}

const portFor = async (condition: unknown) => (await runIf(contextFor(condition))).ports;

describe('runIf', () => {
  it('passes the input on through the true port for a true condition', async () => {
    expect(await runIf(contextFor(true))).toEqual({ output: input, ports: ['true'] });
  });

  it('takes the false port for false, null, 0, "", empty arrays and objects, and a missing value', async () => {
    for (const value of [false, null, 0, '', [], {}, undefined, [0, '', false]]) {
      expect({ value, ports: await portFor(value) }).toEqual({ value, ports: ['false'] });
    }
  });

  it('takes the true port for non-zero numbers, non-empty strings and objects, and arrays with a true member', async () => {
    for (const value of [1, -0.5, 'no', 'false', { a: 1 }, [0, 1], [[true]]]) {
      expect({ value, ports: await portFor(value) }).toEqual({ value, ports: ['true'] });
    }
  });
});
