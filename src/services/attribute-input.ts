import { AppError, type ErrorItem } from '../errors/app-error.js';

/**
 * Attributes of a create or update request, with the JSON Pointer each one came from
 * (`/data/attributes/name` in the envelope form, `/data/name` in the flat form), so services
 * can point at the offending field without knowing which form the caller used.
 */
export interface AttributeInput {
  values: Record<string, unknown>;
  pointer(name: string): string;
}

/** Collects violations and throws them together as one 422. */
export class Violations {
  readonly items: ErrorItem[] = [];

  add(pointer: string, detail: string, code = 'validation_failed'): void {
    this.items.push({ code, detail, source: { pointer } });
  }

  throwIfAny(): void {
    if (this.items.length > 0) throw AppError.many('validation_failed', this.items);
  }
}

export function rejectUnknown(
  input: AttributeInput,
  allowed: readonly string[],
  violations: Violations,
  hint: (name: string) => string,
): void {
  for (const name of Object.keys(input.values)) {
    if (!allowed.includes(name)) violations.add(input.pointer(name), hint(name));
  }
}

/** A required or optional trimmed string of bounded length; returns undefined when absent. */
export function readString(
  input: AttributeInput,
  name: string,
  violations: Violations,
  options: { required?: boolean; max: number; nullable?: boolean },
): string | null | undefined {
  const value = input.values[name];
  if (value === undefined) {
    if (options.required) violations.add(input.pointer(name), `${name} is required`);
    return undefined;
  }
  if (value === null && options.nullable) return null;
  if (typeof value !== 'string') {
    violations.add(input.pointer(name), `${name} must be a string${options.nullable ? ' or null' : ''}`);
    return undefined;
  }
  const trimmed = value.trim();
  if (options.required && trimmed.length === 0) {
    violations.add(input.pointer(name), `${name} must not be empty`);
    return undefined;
  }
  if (trimmed.length > options.max) {
    violations.add(input.pointer(name), `${name} must be at most ${options.max} characters`);
    return undefined;
  }
  return trimmed;
}
