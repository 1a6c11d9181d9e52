import { describe, expect, it, vi } from 'vitest';
import { cancellationOf, RunCancel } from './cancellation.js';

describe('RunCancel', () => {
  it('calls each listener once on abort, in order, and never a removed one', () => {
    const cancel = new RunCancel();
    const calls: string[] = [];
    cancel.onAbort(() => calls.push('a'));
    const removeB = cancel.onAbort(() => calls.push('b'));
    cancel.onAbort(() => calls.push('c'));
    removeB();
    expect(cancel.aborted).toBe(false);
    cancel.abort();
    cancel.abort();
    expect(cancel.aborted).toBe(true);
    expect(calls).toEqual(['a', 'c']);
  });

  it('keeps the same function added twice as two listeners, each removed by its own call', () => {
    const cancel = new RunCancel();
    const listener = vi.fn();
    const first = cancel.onAbort(listener);
    cancel.onAbort(listener);
    first();
    cancel.abort();
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('does not call a listener added after the abort (like an AbortSignal), and its remover is harmless', () => {
    const cancel = new RunCancel();
    cancel.abort();
    const listener = vi.fn();
    const remove = cancel.onAbort(listener);
    remove();
    expect(listener).not.toHaveBeenCalled();
  });

  it('makes no AbortSignal until one is read, then one that follows it with the same reason', () => {
    const cancel = new RunCancel();
    // The point of the class (see its comment): a run that never reads `signal` makes none.
    const controller = () => (cancel as unknown as { controller: AbortController | undefined }).controller;
    cancel.onAbort(() => {});
    cancel.abort();
    expect(controller()).toBeUndefined();
    expect(cancel.signal.aborted).toBe(true);
    expect(controller()).toBeInstanceOf(AbortController);
    expect(cancel.signal).toBe(cancel.signal);
    expect((cancel.signal.reason as Error).name).toBe('AbortError');
  });

  it('aborts a signal read before the abort, with the reason given', () => {
    const cancel = new RunCancel();
    const { signal } = cancel;
    const seen = vi.fn();
    signal.addEventListener('abort', seen);
    const reason = new Error('stopping');
    cancel.abort(reason);
    expect(seen).toHaveBeenCalledTimes(1);
    expect(signal.reason).toBe(reason);
  });
});

describe('cancellationOf', () => {
  it('follows an AbortSignal: aborted, the signal itself, and listeners that can be removed', () => {
    const controller = new AbortController();
    const cancel = cancellationOf(controller.signal);
    const kept = vi.fn();
    const removed = vi.fn();
    cancel.onAbort(kept);
    cancel.onAbort(removed)();
    expect(cancel.signal).toBe(controller.signal);
    expect(cancel.aborted).toBe(false);
    controller.abort();
    expect(cancel.aborted).toBe(true);
    expect(kept).toHaveBeenCalledTimes(1);
    expect(removed).not.toHaveBeenCalled();
    const late = vi.fn();
    cancel.onAbort(late);
    expect(late).not.toHaveBeenCalled();
  });
});
