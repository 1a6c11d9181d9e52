import { v7 as uuidv7, validate, version } from 'uuid';

/** Every id the service mints is a UUID v7: time-ordered, so an id tie-break follows insertion order. */
export function newId(): string {
  return uuidv7();
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && validate(value);
}

export function isUuidV7(value: unknown): boolean {
  return isUuid(value) && version(value) === 7;
}
