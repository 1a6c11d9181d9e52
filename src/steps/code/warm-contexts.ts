import type { SandboxContext } from './sandbox-context.js';
import type { ModuleSlot } from './wasm-module.js';

/**
 * Idle contexts kept for later runs of the same step, in this thread (each sandbox worker has
 * its own). A fresh context costs ~0.25 ms of a small run's ~0.3 ms (building every intrinsic,
 * then freeing them); a warm one skips that, the console and error-class set-up and the
 * compile, so the run costs ~0.04 ms.
 *
 * The key is the step's reuse key (workspace, workflow, node: see run-code.ts) and its code, so
 * a context only ever serves runs of the same code of the same step of the same workspace. A
 * context is taken out while it runs and comes back only after a run that succeeded and left
 * nothing behind but changes to built-ins (sandbox.ts decides, SandboxContext.tidy sweeps).
 */

/** Idle contexts kept per thread at most; the least recently used goes first. */
const MAX_IDLE = 32;
/** Runs one context serves at most, so garbage a step leaves in it is dropped now and then. */
export const MAX_RUNS_PER_CONTEXT = 1_000;
/** A context whose heap ends a run larger than this is not kept (its memory goes back to the module). */
export const MAX_KEPT_HEAP_BYTES = 4 * 1024 * 1024;

const idle = new Map<string, SandboxContext>();

/** A step's key with its code: a context (and inline-runs.ts's record of a slow step) serves that code only. */
export const keyOf = (reuseKey: string, code: string) => `${reuseKey}\n${code}`;

/** An idle context for this step and code on `slot`, taken out of the cache; undefined when there is none. */
export function takeWarm(reuseKey: string, code: string, slot: ModuleSlot): SandboxContext | undefined {
  const key = keyOf(reuseKey, code);
  const context = idle.get(key);
  if (context === undefined) return undefined;
  idle.delete(key);
  if (context.slot === slot && !slot.poisoned && !slot.retired) return context;
  context.dispose();
  return undefined;
}

/** Keeps a context that may serve the step's next run, dropping the least recently used beyond MAX_IDLE. */
export function keepWarm(reuseKey: string, code: string, context: SandboxContext): void {
  const key = keyOf(reuseKey, code);
  idle.get(key)?.dispose();
  idle.delete(key);
  idle.set(key, context);
  if (idle.size <= MAX_IDLE) return;
  const [oldestKey, oldest] = idle.entries().next().value as [string, SandboxContext];
  idle.delete(oldestKey);
  oldest.dispose();
}

/** Drops the idle contexts of a module that is being replaced, so its memory can go. */
export function dropWarm(slot: ModuleSlot): void {
  for (const [key, context] of idle) {
    if (context.slot !== slot) continue;
    idle.delete(key);
    context.dispose();
  }
}

/** For tests: how many idle contexts this thread keeps. */
export function warmContextCount(): number {
  return idle.size;
}
