import { STATUS_CODES } from 'node:http';
import { request, type Dispatcher } from 'undici';
import { NonRetriableError, RetryAfterError, StepError, StepTimeoutError } from '../../engine/step-errors.js';
import { createGuardedDispatcher } from '../../lib/ssrf-guard.js';
import type { StepResult, StepRuntime } from '../step-runtime.js';
import { planRequest, readTimeout, redactUrl, redirectRequest, type HttpRequestPlan } from './http-request.js';
import { bodyExcerpt, headerValue, MAX_RESPONSE_BYTES, parseBody, parseRetryAfter, readBody, responseHeaders } from './http-response.js';

/** Redirects are followed by hand (not by undici) so each hop gets the method, body and credential rules of http-request.ts. */
export const MAX_REDIRECTS = 5;
/** An error response is kept on the step record only as an excerpt: enough to read an API's error message. */
const EXCERPT_BYTES = 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface HttpRuntimeOptions {
  /** The dispatcher for an allow-list. Default: one guarded Agent per distinct list, kept for the life of the process. */
  dispatcherFor?: (allow: readonly string[]) => Dispatcher;
  maxResponseBytes?: number;
}

/** One Agent per allow-list (normally exactly one per process), so keep-alive connections are reused across steps. */
const dispatchers = new Map<string, Dispatcher>();

function sharedDispatcher(allow: readonly string[]): Dispatcher {
  const key = JSON.stringify(allow);
  let dispatcher = dispatchers.get(key);
  if (!dispatcher) {
    dispatcher = createGuardedDispatcher(allow);
    dispatchers.set(key, dispatcher);
  }
  return dispatcher;
}

type Response = Dispatcher.ResponseData;

/**
 * The http step: one request (plus redirects), its answer as `{status, headers, body}`, and
 * every failure as the engine's vocabulary: 4xx stop, 5xx and network errors retry, 429/503
 * say when, a refused address is final.
 */
export function createHttpRuntime(options: HttpRuntimeOptions = {}): StepRuntime {
  const dispatcherFor = options.dispatcherFor ?? sharedDispatcher;
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;

  return async (context) => {
    const timeoutMs = readTimeout(context.config);
    let plan = planRequest(context.config);
    const provider = plan.url.host;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([context.cancel.signal, timeout]);
    const dispatcher = dispatcherFor(context.settings.httpAllow);
    const logs: string[] = [];
    try {
      for (let redirects = 0; ; redirects++) {
        const response = await request(plan.url, { dispatcher, method: plan.method, headers: plan.headers, body: plan.body, signal });
        const location = headerValue(response.headers, 'location');
        if (!REDIRECT_STATUSES.has(response.statusCode) || location === undefined) {
          const output = await readResponse(response, plan, maxBytes, context.clock.nowMs());
          return { output, metrics: { kind: 'http', provider }, ...(logs.length > 0 ? { logs } : {}) } satisfies StepResult;
        }
        // Drained (up to 64 KiB, else the socket is closed) so the keep-alive connection can serve the next hop.
        await response.body.dump({ signal, limit: 64 * 1024 });
        if (redirects === MAX_REDIRECTS) {
          throw new NonRetriableError(`${plan.method} ${redactUrl(plan.url)}: more than ${MAX_REDIRECTS} redirects`, {
            code: 'too_many_redirects',
          });
        }
        plan = redirectRequest(plan, response.statusCode, location);
        logs.push(`followed ${response.statusCode} to ${plan.method} ${redactUrl(plan.url)}`);
      }
    } catch (error) {
      throw classifyFailure(error, plan, { cancel: context.cancel.signal, timeout, timeoutMs });
    }
  };
}

export const runHttp: StepRuntime = createHttpRuntime();

async function readResponse(response: Response, plan: HttpRequestPlan, maxBytes: number, nowMs: number): Promise<unknown> {
  const status = response.statusCode;
  const contentType = headerValue(response.headers, 'content-type');
  const encoding = headerValue(response.headers, 'content-encoding');
  if (status >= 400) {
    const { bytes } = await readBody(response.body, encoding, EXCERPT_BYTES);
    throw httpError(
      plan,
      status,
      bodyExcerpt(bytes, contentType, EXCERPT_BYTES),
      parseRetryAfter(headerValue(response.headers, 'retry-after'), nowMs),
    );
  }
  const tooLarge = () =>
    new NonRetriableError(`${plan.method} ${redactUrl(plan.url)}: the response is larger than ${maxBytes} bytes`, {
      code: 'response_too_large',
      details: { status, limit_bytes: maxBytes },
    });
  // A declared length over the limit fails before a byte is read (HEAD declares one but sends nothing).
  const declared = Number(headerValue(response.headers, 'content-length'));
  if (plan.method !== 'HEAD' && declared > maxBytes) {
    response.body.destroy();
    throw tooLarge();
  }
  const { bytes, exceeded } = await readBody(response.body, encoding, maxBytes);
  if (exceeded) throw tooLarge();
  return { status, headers: responseHeaders(response.headers), body: parseBody(bytes, contentType) };
}

function httpError(plan: HttpRequestPlan, status: number, excerpt: string, retryAfterMs: number | null): StepError {
  const reason = STATUS_CODES[status];
  const message = `${plan.method} ${redactUrl(plan.url)} answered ${status}${reason ? ` ${reason}` : ''}`;
  const code = `http_${status}`;
  const details = { status, body: excerpt };
  if ((status === 429 || status === 503) && retryAfterMs !== null) return new RetryAfterError(message, retryAfterMs, { code, details });
  // 429 without Retry-After is still "slow down", never "you asked wrongly": retry with the node's backoff.
  if (status === 429 || status >= 500) return new StepError(message, { code, details });
  return new NonRetriableError(message, { code, details });
}

function findCause(error: unknown, code: string): (Error & { hostname?: string; address?: string }) | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if ((current as NodeJS.ErrnoException).code === code) return current;
  }
  return null;
}

/** Anything thrown while requesting, as the engine's vocabulary. Order matters: an abort makes undici throw a generic error. */
function classifyFailure(
  error: unknown,
  plan: HttpRequestPlan,
  signals: { cancel: AbortSignal; timeout: AbortSignal; timeoutMs: number },
): StepError {
  if (error instanceof StepError) return error;
  const target = `${plan.method} ${redactUrl(plan.url)}`;
  if (signals.cancel.aborted) {
    // The engine aborts the same signal when the step's own time limit passes.
    const reason: unknown = signals.cancel.reason;
    if (reason instanceof Error && reason.name === 'TimeoutError') return new StepTimeoutError(`${target}: the step's time limit passed`);
    return new StepError(`${target}: cancelled`, { code: 'cancelled', retryable: false });
  }
  if (signals.timeout.aborted) return new StepTimeoutError(`${target}: no complete response within ${signals.timeoutMs} ms`);
  const forbidden = findCause(error, 'EFORBIDDENADDRESS');
  if (forbidden) {
    return new NonRetriableError(forbidden.message, {
      code: 'forbidden_address',
      details: { host: forbidden.hostname, address: forbidden.address },
    });
  }
  // undici refuses what it cannot send (a header value with a line break, say): retrying sends the same.
  const invalidArgument = findCause(error, 'UND_ERR_INVALID_ARG');
  if (invalidArgument) return new NonRetriableError(`${target}: ${invalidArgument.message}`, { code: 'invalid_request' });
  const errno = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return new StepError(`${target} failed: ${message}`, { code: 'network_error', ...(errno ? { details: { error_code: errno } } : {}) });
}
