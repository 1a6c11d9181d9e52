import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { withCallSignal } from './call-signal.js';

describe('withCallSignal', () => {
  it('gives the call a signal that aborts with its parent, for the parent’s reason', async () => {
    const parent = new AbortController();
    let seen: AbortSignal | undefined;
    const call = withCallSignal(parent.signal, (signal) => {
      seen = signal;
      return new Promise<string>((resolve, reject) => signal!.addEventListener('abort', () => reject(signal!.reason as Error)));
    });
    expect(seen).not.toBe(parent.signal);
    expect(seen!.aborted).toBe(false);
    parent.abort(new Error('step cancelled'));
    await expect(call).rejects.toThrow('step cancelled');
    expect(seen!.aborted).toBe(true);
  });

  it('gives an aborted signal when the parent is aborted already', async () => {
    const parent = new AbortController();
    parent.abort(new Error('gone'));
    const aborted = await withCallSignal(parent.signal, async (signal) => [signal!.aborted, (signal!.reason as Error).message]);
    expect(aborted).toEqual([true, 'gone']);
  });

  it('leaves no listener on the parent once a call ends, answered or failed', async () => {
    const parent = new AbortController();
    for (let i = 0; i < 20; i++) await withCallSignal(parent.signal, async () => i);
    await expect(withCallSignal(parent.signal, () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('passes no signal when there is none', async () => {
    expect(await withCallSignal(undefined, async (signal) => signal)).toBeUndefined();
  });
});
