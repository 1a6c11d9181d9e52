/**
 * How a step learns that its execution was cancelled (or the engine is stopping).
 *
 * Not an AbortSignal per run, on purpose: on Node 20 every AbortSignal gets a hidden class of its
 * own (Node makes it with `Object.setPrototypeOf` and then adds three properties), and objects of
 * one-off hidden classes survive scavenges. A loop making one signal per iteration promoted
 * 3.8 MB per scavenge, with 12 ms pauses, where the same loop making plain objects promoted
 * nothing; and whatever an abort listener holds (a whole run's state) survives with it. In the
 * webhook benchmark that was most of what the main thread's scavenges copied. So a run carries a
 * `RunCancel`, whose listeners are a plain set, and an AbortSignal is made only for a step that
 * hands one to a library (the HTTP step gives it to undici).
 */
export interface Cancellation {
  readonly aborted: boolean;
  /** An AbortSignal that follows this cancellation, made on first read (with the same reason). */
  readonly signal: AbortSignal;
  /**
   * Calls `listener` once, when the cancellation happens; not at all if it already has (check
   * `aborted` first, as with an AbortSignal). Returns the function that removes the listener.
   */
  onAbort(listener: () => void): () => void;
}

/** A cancellation the engine controls: one per run in flight. */
export class RunCancel implements Cancellation {
  private isAborted = false;
  private reason: unknown;
  private controller: AbortController | undefined;
  private listeners: Set<() => void> | undefined;

  get aborted(): boolean {
    return this.isAborted;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.isAborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  onAbort(listener: () => void): () => void {
    if (this.isAborted) return noop;
    // Its own wrapper, so the same function added twice is two listeners, each removed by its own call.
    const entry = () => listener();
    (this.listeners ??= new Set()).add(entry);
    return () => void this.listeners?.delete(entry);
  }

  /** Aborts once; later calls do nothing. Without a reason, the signal's is the usual AbortError. */
  abort(reason?: unknown): void {
    if (this.isAborted) return;
    this.isAborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }
}

/** A cancellation that follows an existing AbortSignal (tests, and callers that already hold one). */
export function cancellationOf(signal: AbortSignal): Cancellation {
  return {
    get aborted() {
      return signal.aborted;
    },
    signal,
    onAbort(listener) {
      if (signal.aborted) return noop;
      const entry = () => listener();
      signal.addEventListener('abort', entry, { once: true });
      return () => signal.removeEventListener('abort', entry);
    },
  };
}

function noop(): void {}
