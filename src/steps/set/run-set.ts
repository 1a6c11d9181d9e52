import { NonRetriableError } from '../../engine/step-errors.js';
import { isPlainObject } from '../../lib/json.js';
import type { StepRuntime } from '../step-runtime.js';

/** The engine has already evaluated the expressions in `values`; the output is that object. */
export const runSet: StepRuntime = async (context) => {
  const values = context.config.values ?? {};
  // Only a `values` written as one expression can end up as something else at run time.
  if (!isPlainObject(values)) {
    throw new NonRetriableError(`node "${context.nodeId}": config.values must yield an object; it gave ${describeType(values)}.`, {
      code: 'invalid_config',
      details: { node_id: context.nodeId, field: 'config.values' },
    });
  }
  return { output: values };
};

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
