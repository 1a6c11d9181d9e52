/** JSON columns are stored as text on both dialects; these keep the encoding in one place. */
export function toJsonText(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function fromJsonText<T = unknown>(value: string | null | undefined): T | null {
  return value === null || value === undefined ? null : (JSON.parse(value) as T);
}

/** Freezes `value` and everything reachable through its own properties; already frozen parts are left as they are. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
