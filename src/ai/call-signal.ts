/**
 * Runs one provider SDK call with a signal of its own that follows `parent`. The official openai
 * and Anthropic clients add an `abort` listener to the signal they are given and never remove
 * it (openai 6.30 adds it `{ once: true }`, which only helps if the signal fires), so one
 * long-lived signal handed to call after call (an embedding job's batches, an agent's turns)
 * kept a listener per call until it was collected: past 10 Node warns
 * (MaxListenersExceededWarning) on every further one. The SDK's listener goes on the call's own
 * signal, dropped with it; the one put on `parent` here is removed when the call ends.
 */
export async function withCallSignal<T>(
  parent: AbortSignal | undefined,
  call: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (parent === undefined) return call(undefined);
  const own = new AbortController();
  const forward = () => own.abort(parent.reason);
  if (parent.aborted) own.abort(parent.reason);
  else parent.addEventListener('abort', forward, { once: true });
  try {
    return await call(own.signal);
  } finally {
    parent.removeEventListener('abort', forward);
  }
}
