/**
 * The engine's failure vocabulary (Temporal/Inngest style): a step error is retryable unless it
 * says otherwise; `RetryAfterError` names the next delay; `NonRetriableError` stops retries at
 * once. Every stored step error has the fixed shape of `SerializedStepError`.
 */
export class StepError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterMs: number | null;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    message: string,
    options: { code?: string; retryable?: boolean; retryAfterMs?: number | null; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'StepError';
    this.code = options.code ?? 'step_failed';
    this.retryable = options.retryable ?? true;
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.details = options.details;
  }
}

/** Retrying cannot help (bad input, a 4xx, a failed expression): the step fails at once. */
export class NonRetriableError extends StepError {
  constructor(message: string, options: { code?: string; details?: Record<string, unknown> } = {}) {
    super(message, Object.assign({}, options, { code: options.code ?? 'non_retriable', retryable: false }));
    this.name = 'NonRetriableError';
  }
}

/** Retry, but not before `retryAfterMs` (a 429's Retry-After, say). */
export class RetryAfterError extends StepError {
  constructor(message: string, retryAfterMs: number, options: { code?: string; details?: Record<string, unknown> } = {}) {
    super(message, Object.assign({}, options, { code: options.code ?? 'retry_after', retryable: true, retryAfterMs }));
    this.name = 'RetryAfterError';
  }
}

/** The step ran past its time limit. Retryable: a slow dependency may recover. */
export class StepTimeoutError extends StepError {
  constructor(message: string) {
    super(message, { code: 'timeout', retryable: true });
    this.name = 'StepTimeoutError';
  }
}

/**
 * Not a failure: the attempt parks until an approval it asked for is decided, or `resumeAtMs`
 * (its time-out), and runs again then (an agent's tool with `requires_approval`; the attempt
 * replays its journal up to the tool call and reads the decision).
 */
export class WaitForApproval extends Error {
  constructor(
    readonly resumeAtMs: number,
    /** What the attempt's waiting row shows meanwhile (the approval asked for). */
    readonly output: unknown = null,
  ) {
    super('the attempt waits for an approval');
    this.name = 'WaitForApproval';
  }
}

export interface SerializedStepError {
  name: string;
  code: string;
  message: string;
  retryable: boolean;
  retry_after_ms: number | null;
  details?: Record<string, unknown>;
}

/** Any thrown value as the stored error shape; unknown errors are retryable with their message. */
export function serializeStepError(error: unknown): SerializedStepError {
  if (error instanceof StepError) {
    return {
      name: error.name,
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      retry_after_ms: error.retryAfterMs,
      ...(error.details ? { details: error.details } : {}),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { name: 'Error', code: 'step_failed', message, retryable: true, retry_after_ms: null };
}
