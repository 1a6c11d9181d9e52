import { expect } from 'vitest';
import { AppError } from '../../src/errors/app-error.js';

/** Asserts that `action` throws the 400 `invalid_query_parameter` naming `parameter`, with `detail`. */
export function expectInvalidParameter(action: () => unknown, parameter: string, detail: string): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AppError);
  const error = caught as AppError;
  expect({ code: error.code, status: error.status, detail: error.message, source: error.items[0]?.source }).toEqual({
    code: 'invalid_query_parameter',
    status: 400,
    detail,
    source: { parameter },
  });
}
