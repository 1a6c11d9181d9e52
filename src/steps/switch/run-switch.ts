import { isPlainObject } from '../../lib/json.js';
import type { StepRuntime } from '../step-runtime.js';
import { SWITCH_DEFAULT_PORT } from './index.js';

/** The engine has already evaluated `value` and each `equals`; the first equal case wins. */
export const runSwitch: StepRuntime = async (context) => {
  const { value, cases } = context.config;
  const list = Array.isArray(cases) ? cases : [];
  const match = list.find((entry: unknown) => isPlainObject(entry) && jsonEqual(value ?? null, entry.equals ?? null)) as
    { port: string } | undefined;
  return { output: context.input, ports: [match?.port ?? SWITCH_DEFAULT_PORT] };
};

/**
 * Equality of JSON values: objects field by field in any key order, arrays item by item.
 * Not `util.isDeepStrictEqual`, which tells 0 from -0 (JSONata can yield -0) and compares
 * extra properties that arrays from other code may carry.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}
