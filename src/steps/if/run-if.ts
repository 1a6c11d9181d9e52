import jsonata from 'jsonata';
import type { StepRuntime } from '../step-runtime.js';

// JSONata's own `$boolean`, so a condition means the same here as inside any expression
// (`$boolean([0, ""])` is false, `$boolean({"a": 1})` is true). Compiled once: it is constant.
const toBoolean = jsonata('$boolean($value) = true');

/** The engine has already evaluated `condition`; this decides which port its value takes. */
export const runIf: StepRuntime = async (context) => {
  const truthy = (await toBoolean.evaluate(null, { value: context.config.condition })) === true;
  return { output: context.input, ports: [truthy ? 'true' : 'false'] };
};
