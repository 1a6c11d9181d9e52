import { isRetryableStatus, ProviderError, redact, retryAfterFrom } from './provider-error.js';

/** The parts of the official SDKs' `APIError` (OpenAI and Anthropic share the shape) read here. */
interface SdkApiError extends Error {
  status?: number;
  headers?: { get(name: string): string | null };
}

function findCause(error: unknown, code: string): (Error & { hostname?: string; address?: string }) | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 6; current = current.cause, depth++) {
    if ((current as NodeJS.ErrnoException).code === code) return current;
  }
  return null;
}

/**
 * Whatever an SDK call threw, as a ProviderError with every secret removed from the message.
 * The SDKs run with `maxRetries: 0`: retries are ours, durable and honouring `Retry-After`.
 */
export function classifySdkError(error: unknown, provider: string, secrets: readonly (string | null)[], nowMs: number): ProviderError {
  if (error instanceof ProviderError) return error;
  const clean = (message: string) => redact(message, secrets);
  const forbidden = findCause(error, 'EFORBIDDENADDRESS');
  if (forbidden) return new ProviderError('forbidden_address', clean(forbidden.message), { provider });
  if (error instanceof SyntaxError)
    return new ProviderError('malformed', `${provider} answered with a body that is not JSON`, { provider });
  const apiError = error as SdkApiError;
  const status = typeof apiError.status === 'number' ? apiError.status : null;
  const message = clean(`${provider}: ${error instanceof Error ? error.message : String(error)}`);
  if (status === null) {
    // The SDKs wrap a JSON parse failure of a 2xx body in their own error type on some paths.
    if (error instanceof Error && /JSON|Unexpected token|Unexpected end/i.test(error.message) && !/connection/i.test(error.message)) {
      return new ProviderError('malformed', `${provider} answered with a body that is not JSON`, { provider });
    }
    return new ProviderError('retryable', message, { provider });
  }
  if (status >= 200 && status < 300) return new ProviderError('malformed', message, { status, provider });
  if (isRetryableStatus(status))
    return new ProviderError('retryable', message, { status, retryAfterMs: retryAfterFrom(apiError.headers, nowMs), provider });
  return new ProviderError('rejected', message, { status, provider });
}
