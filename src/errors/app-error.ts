import { ERROR_CODES, type ErrorCode } from './error-codes.js';

/** Where in the request an error points: a JSON Pointer into the body, or a query parameter name. */
export type ErrorSource = { pointer: string } | { parameter: string } | { header: string };

export interface ErrorItem {
  code: ErrorCode | string;
  detail: string;
  source?: ErrorSource;
  /** Machine-readable facts about the error (JSON:API error `meta`), e.g. counts. */
  meta?: Record<string, unknown>;
}

/**
 * The one error type services throw. It carries one or more error items (a 422 lists every
 * violation); the status is the registry's status for the first item's code.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly items: ErrorItem[];
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail: string,
    source?: ErrorSource,
    options: { items?: ErrorItem[]; headers?: Record<string, string>; meta?: Record<string, unknown> } = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.items = options.items ?? [{ code, detail, ...(source ? { source } : {}), ...(options.meta ? { meta: options.meta } : {}) }];
    this.headers = options.headers ?? {};
  }

  /** A 422 (or other status) listing several violations under one code's status. */
  static many(code: ErrorCode, items: ErrorItem[]): AppError {
    const first = items[0];
    return new AppError(code, first?.detail ?? ERROR_CODES[code].title, first?.source, { items });
  }
}

export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}

export function titleOf(code: string, fallback = 'Error'): string {
  return (ERROR_CODES as Record<string, { title: string }>)[code]?.title ?? fallback;
}
