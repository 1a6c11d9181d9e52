import { AppError } from '../errors/app-error.js';
import { ProviderError } from '../ai/provider-error.js';

/**
 * A provider failure met while answering a request (a search embedding its query with a
 * connection's model): 503 `provider_unavailable` with `Retry-After` when trying again can
 * help, 502 `provider_error` otherwise. The message is the provider layer's, secrets removed.
 */
export function providerFailure(error: unknown): unknown {
  if (!(error instanceof ProviderError)) return error;
  if (error.retryable) {
    const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
    return new AppError('provider_unavailable', error.message, undefined, { headers: { 'retry-after': String(seconds) } });
  }
  return new AppError('provider_error', error.message);
}
