import { describe, expect, it } from 'vitest';
import { NonRetriableError } from '../../engine/step-errors.js';
import type { StepRunContext } from '../step-runtime.js';
import { runSet } from './run-set.js';
import { stepContext } from '../../../test/support/step-context.js';

function contextFor(config: Record<string, unknown>, input: unknown = { from: 'upstream' }): StepRunContext {
  return stepContext({ nodeId: 'shape', config, input });
}

describe('runSet', () => {
  it('outputs the resolved values, without the input', async () => {
    expect(await runSet(contextFor({ values: { id: 42, label: 'Order 42' } }))).toEqual({ output: { id: 42, label: 'Order 42' } });
  });

  it('outputs an empty object when values are missing', async () => {
    expect(await runSet(contextFor({}))).toEqual({ output: {} });
  });

  it('fails without retrying when an expression for values yielded something else', async () => {
    const error = await runSet(contextFor({ values: [1, 2] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonRetriableError);
    expect(error).toMatchObject({
      code: 'invalid_config',
      message: 'node "shape": config.values must yield an object; it gave an array.',
      details: { node_id: 'shape', field: 'config.values' },
    });
  });
});
