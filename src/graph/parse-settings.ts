import { isPlainObject } from '../lib/json.js';
import type { GraphSettings, GraphViolation } from './graph-types.js';
import { escapePointerToken } from '../lib/json-pointer.js';

/** Upper bound of a workflow's concurrency limit; the engine-wide limit is lower in practice. */
export const MAX_CONCURRENCY_LIMIT = 1000;
const SETTING_NAMES = ['concurrency_limit', 'save_step_payloads'];

/** Checks a graph's optional `settings` object; undefined stays undefined (the defaults apply). */
export function parseSettings(raw: unknown, pointer: string): { value: GraphSettings | undefined; violations: GraphViolation[] } {
  if (raw === undefined) return { value: undefined, violations: [] };
  const problem = (at: string, detail: string): GraphViolation => ({ pointer: `${pointer}${at}`, code: 'invalid_settings', detail });
  if (!isPlainObject(raw)) return { value: undefined, violations: [problem('', 'settings must be an object.')] };
  const violations: GraphViolation[] = [];
  const value: GraphSettings = {};
  const limit = raw.concurrency_limit;
  if (limit !== undefined) {
    if (limit === null || (Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= MAX_CONCURRENCY_LIMIT)) {
      value.concurrency_limit = limit as number | null;
    } else {
      violations.push(
        problem('/concurrency_limit', `concurrency_limit must be a whole number from 1 to ${MAX_CONCURRENCY_LIMIT}, or null for no limit.`),
      );
    }
  }
  const save = raw.save_step_payloads;
  if (save !== undefined) {
    if (typeof save === 'boolean') value.save_step_payloads = save;
    else violations.push(problem('/save_step_payloads', 'save_step_payloads must be a boolean.'));
  }
  for (const key of Object.keys(raw)) {
    if (!SETTING_NAMES.includes(key)) {
      violations.push(
        problem(`/${escapePointerToken(key)}`, `Setting "${key}" is not known; the settings are ${SETTING_NAMES.join(' and ')}.`),
      );
    }
  }
  return { value, violations };
}
