import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { createGuardedDispatcher } from '../lib/ssrf-guard.js';

/** What the SDKs accept as `fetch`. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** One guarded Agent per allow-list, kept for the process (it owns the keep-alive pool). */
const dispatchers = new Map<string, Dispatcher>();

function dispatcherFor(allow: readonly string[]): Dispatcher {
  const key = JSON.stringify(allow);
  let dispatcher = dispatchers.get(key);
  if (!dispatcher) {
    dispatcher = createGuardedDispatcher(allow);
    dispatchers.set(key, dispatcher);
  }
  return dispatcher;
}

/**
 * A `fetch` for the provider SDKs whose every connection passes the private-address guard
 * (lib/ssrf-guard.ts): a connection's base URL is user input, so without it a connection could
 * point the SDK at the cloud metadata service. `SWITCHYARD_HTTP_ALLOW` opens it for local model
 * servers (Ollama, vLLM, LM Studio, llama.cpp on 127.0.0.1).
 */
export function guardedFetch(allow: readonly string[]): FetchFunction {
  const dispatcher = dispatcherFor(allow);
  return (input, init) => {
    const url = typeof input === 'string' || input instanceof URL ? input : input.url;
    const protocol = new URL(url).protocol;
    if (protocol !== 'http:' && protocol !== 'https:')
      return Promise.reject(new TypeError(`only http and https base URLs can be used, not ${protocol}`));
    // undici's fetch and the global one share the WHATWG types; the cast bridges their declarations.
    return undiciFetch(url, Object.assign({}, init as object, { dispatcher })) as unknown as Promise<Response>;
  };
}
