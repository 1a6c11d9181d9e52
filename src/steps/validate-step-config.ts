import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { StepDefinition } from './define-step.js';
import { describeConfigErrors, type ConfigIssue } from './describe-config-errors.js';

export type { ConfigIssue } from './describe-config-errors.js';

const ajv = new Ajv2020({
  allErrors: true,
  // `verbose` gives each error its schema, which the anyOf/discriminator sentences read.
  verbose: true,
  // Tagged unions (webhook `verification`) report only the chosen branch's errors.
  discriminator: true,
  allowUnionTypes: true,
});
addFormats.default(ajv, ['uuid']);

// Definitions are frozen singletons, so identity is a sound cache key.
const compiled = new WeakMap<StepDefinition, ValidateFunction>();

export function compileStepConfig(definition: StepDefinition): ValidateFunction {
  let validate = compiled.get(definition);
  if (validate === undefined) {
    validate = ajv.compile(definition.configSchema);
    compiled.set(definition, validate);
  }
  return validate;
}

/** Validates a config as given (callers merge it over `defaultConfig` first). */
export function validateStepConfig(definition: StepDefinition, config: unknown): ConfigIssue[] {
  const validate = compileStepConfig(definition);
  if (validate(config)) return [];
  return describeConfigErrors(validate.errors ?? []);
}

/** Top-level keys of `config` override the defaults; nested objects are replaced, not merged. */
export function mergeStepConfig(definition: StepDefinition, config: Record<string, unknown>): Record<string, unknown> {
  // Spreads, not Object.assign: `config` is the caller's JSON, and a "__proto__" key in it must
  // stay a key. Graph validation only, off the per-execution path.
  // eslint-disable-next-line no-restricted-syntax
  return { ...structuredClone(definition.defaultConfig), ...config };
}
