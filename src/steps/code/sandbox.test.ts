import { describe, expect, it } from 'vitest';
import { runInSandbox, type SandboxOptions } from './sandbox.js';
import { sandboxModulesLoaded } from './wasm-module.js';

/** A signal that reads as aborted from its `from`-th read on: a cancel landing at a chosen point of a run. */
function abortedFromRead(from: number): { signal: SandboxOptions['signal']; reads: () => number } {
  let reads = 0;
  return {
    signal: {
      get aborted() {
        reads += 1;
        return reads >= from;
      },
    },
    reads: () => reads,
  };
}

const run = (code: string, signal: SandboxOptions['signal'], reuseKey: string | null = null) =>
  runInSandbox({
    code,
    argumentsJson: JSON.stringify({ input: { n: 1 }, nodes: {}, trigger: null }),
    reuseKey,
    timeoutMs: 1_000,
    memoryBytes: 64 * 1024 * 1024,
    signal,
    onLog: () => false,
  });

describe('runInSandbox (in this thread)', () => {
  // The pool's retake of runs queued behind a slow one can name a run the worker has already
  // started (sandbox-thread.ts): it is stopped with its promise already fulfilled. Its value
  // must be freed with the run, or QuickJS aborts when the context is freed ("list_empty(&rt->
  // gc_obj_list)") and the module is replaced: about one run in 500 of a loaded server did so.
  it('frees everything of a run stopped after its code returned, so the module serves on', async () => {
    await run('return 1;', { aborted: false });
    for (const from of [1, 2]) {
      const loaded = sandboxModulesLoaded();
      const cancel = abortedFromRead(from);
      const stopped = await run('return { n: input.n, list: [input.n] };', cancel.signal, `key-${from}`);
      // Read 1: once the promise is fulfilled; read 2: once the output is stringified. Both stop the run.
      expect(cancel.reads()).toBe(from);
      expect(stopped).toMatchObject({ ok: false, failure: { kind: 'cancelled' } });
      expect(await run('return input.n + 1;', { aborted: false })).toMatchObject({ ok: true, json: '2' });
      expect(sandboxModulesLoaded()).toBe(loaded);
    }
  });
});
