import { NonRetriableError, RetryAfterError, StepError } from '../engine/step-errors.js';

/**
 * The provider layer's one failure vocabulary, whatever the SDK or provider:
 * - `retryable`: 429, 408, 409 and 5xx answers, connection failures and time-outs; `retryAfterMs`
 *   carries the provider's `Retry-After` (or `retry-after-ms`) when it sent one;
 * - `rejected`: any other 4xx (a bad key, an unknown model, an invalid request): retrying
 *   sends the same thing;
 * - `malformed`: a 2xx whose body is not JSON or not the protocol's shape;
 * - `forbidden_address`: the base URL resolved to a private address (SWITCHYARD_HTTP_ALLOW).
 * It maps onto the engine's vocabulary with `toStepError` and onto the API's with its `kind`.
 */
export const PROVIDER_ERROR_KINDS = ['retryable', 'rejected', 'malformed', 'forbidden_address'] as const;
export type ProviderErrorKind = (typeof PROVIDER_ERROR_KINDS)[number];

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly options: { status?: number | null; retryAfterMs?: number | null; provider?: string } = {},
  ) {
    super(message);
    this.name = 'ProviderError';
  }

  get status(): number | null {
    return this.options.status ?? null;
  }

  get retryAfterMs(): number | null {
    return this.options.retryAfterMs ?? null;
  }

  get retryable(): boolean {
    return this.kind === 'retryable';
  }

  /** The stored code: `provider_429`, `provider_malformed_response`, `provider_network_error`, `forbidden_address`. */
  get code(): string {
    if (this.kind === 'forbidden_address') return 'forbidden_address';
    if (this.kind === 'malformed') return 'provider_malformed_response';
    return this.status === null ? 'provider_network_error' : `provider_${this.status}`;
  }

  /** The engine's vocabulary: retryable (with the provider's delay when it named one) or not; `extra` joins its details. */
  toStepError(extra: Record<string, unknown> = {}): StepError {
    const details = {
      ...(this.status !== null ? { status: this.status } : {}),
      ...(this.options.provider ? { provider: this.options.provider } : {}),
      ...extra,
    };
    if (this.kind !== 'retryable') return new NonRetriableError(this.message, { code: this.code, details });
    if (this.retryAfterMs !== null) return new RetryAfterError(this.message, this.retryAfterMs, { code: this.code, details });
    return new StepError(this.message, { code: this.code, details });
  }

  toJSON(): { code: string; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** `Retry-After` as seconds or an HTTP date, or `retry-after-ms` (OpenAI's), in milliseconds; null when absent or unreadable. */
export function retryAfterFrom(headers: { get(name: string): string | null } | undefined, nowMs: number): number | null {
  if (!headers) return null;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers.get('retry-after');
  if (value === null) return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/** Statuses worth another try: time-outs, conflicts, rate limits and server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Removes every occurrence of a secret from a provider's message (some echo part of a bad key). */
export function redact(message: string, secrets: readonly (string | null | undefined)[]): string {
  let out = message;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  // Providers echo bad keys partly masked (`sk-abc***xyz`): never pass even that on.
  return out.replace(/\b(sk|sy|key)-[A-Za-z0-9_*.-]{6,}/g, '[redacted]');
}
