import { performance } from 'node:perf_hooks';
import type { SandboxOutcome } from './sandbox.js';
import { runInSandbox } from './sandbox.js';
import { runInSandboxPool, type PooledSandboxOptions } from './sandbox-pool.js';
import { keyOf } from './warm-contexts.js';
import { currentSlot, type ModuleSlot } from './wasm-module.js';

/**
 * Small runs on the calling thread, the rest on the pool (sandbox-pool.ts).
 *
 * Most code steps reshape a payload: with a warm context such a run costs ~0.05 ms, while
 * handing it to a worker thread and back costs the calling thread more than that (two
 * postMessages, each waking the other thread) and makes the run wait for a thread to be
 * scheduled. On the cluster's respond_step load (bench/results/cluster.md), with every
 * run on the pool, the workers' main threads spent 14% of their busy time in `postMessage`, and
 * the code step's median time from start to end was 2.2 ms. So a run starts here, in the same
 * QuickJS sandbox (its own WASM module and warm contexts on this thread), under a short slice
 * instead of the step's limits: if it is not done within `sliceMs`, or needs more memory or
 * stack than the slice allows, that attempt is dropped (its context, its console lines) and the
 * run starts again on the pool under the step's own limits. User code has no timers or I/O, so
 * an attempt leaves nothing behind but the time it took; the outcome a step gets is the one it
 * got on the pool before (the pool's limits are the step's).
 *
 * What keeps the event loop free, as the pool did: runs here take turns, at most MAX_QUEUED
 * waiting (the rest go to the pool); large code or input goes to the pool at once (parsing
 * them is not interruptible); a step whose runs overran goes to the pool for the next
 * `slowForMs` (after two stops in a row by the slice's time of runs that had done the slice's
 * work, five of any, or one by its memory, its stack or a host failure); and inline runs may take at most `share` of the thread's time over the
 * last second, past which every run goes to the pool until it falls again.
 */

const settings = {
  /** Ms a run may take here before it is stopped and run again on the pool; 0: every run goes to the pool. */
  sliceMs: 2,
  /** The memory a run may use here: a run that needs more (but not more than its step allows) goes to the pool. */
  memoryBytes: 8 * 1024 * 1024,
  /** The largest code and input (`{input, nodes, trigger}` as JSON) run here, in characters. */
  maxCodeChars: 16 * 1024,
  maxArgumentsChars: 64 * 1024,
  /** The most of the thread's time inline runs may take, over the last second. */
  share: 0.2,
  /** How long a step whose run overran goes straight to the pool. */
  slowForMs: 60_000,
  /**
   * The work a run does in a ms of its own time, counted in calls of the sandbox's interrupt
   * handler (~2 per ms of busy code on this machine, sandbox.ts). A run stopped by the slice's
   * time after less than half the slice's worth was held up (its thread preempted), not busy.
   */
  interruptsPerMs: 2,
};

/** Steps (reuse key and code, or the code alone without a key) that overran, with when they may run here again; oldest first. */
const slow = new Map<string, number>();
const MAX_SLOW_KEYS = 1_000;
/**
 * Steps whose last runs here were stopped by the slice's time, in a row: how many, and how many
 * of those had done the slice's work. Two that had send the step to the pool: code that needs
 * more than the slice is stopped every time. A small run is stopped now and then only because
 * the thread was held up (a preempted process, a GC pause: 11 of 2,000 warm runs of
 * `return { seen: input.body }` here on an idle machine, far more when the processes on it want
 * more CPU than it has); such stops send a step to the pool only MAX_HELD_UP_STOPS in a row. The
 * slice is wall time (it keeps the event loop free), so counting every stop alike sent steps to
 * the pool for a minute at a time on a loaded machine, which then paid two postMessages a run.
 */
const struck = new Map<string, { stops: number; busy: number }>();
const MAX_HELD_UP_STOPS = 5;
/**
 * Runs waiting for their turn here or running; past MAX_QUEUED the next goes to the pool. A
 * batch of executions a worker is handed starts its code steps in one tick: under the cluster's
 * 32-connection load a hand-off brought a worker ~8-16 at once, and with room for 8 the rest
 * paid the pool's two postMessages (the workers' CPU per delivery, alternating rounds, 0.50-0.65
 * ms with 8, 0.33-0.51 with 32). Small runs take ~0.1-0.3 ms each, so a full queue of them
 * holds the event loop for 3-10 ms; runs that each need the whole slice could hold it for 64 ms
 * once, after which their steps go to the pool (two busy stops in a row).
 */
let queued = 0;
const MAX_QUEUED = 32;
/** Settles when the last run given a turn here has finished. */
let turn: Promise<void> = Promise.resolve();
/** This thread's modules that have loaded: until then runs go to the pool, so a load is never charged to a run's slice. */
const loaded = new WeakSet<ModuleSlot>();
/** The module whose load is awaited (one wait per module, however many runs ask meanwhile). */
let awaited: ModuleSlot | null = null;
/** Inline time spent in the current and the previous one-second window. */
let windowStart = 0;
let spentNow = 0;
let spentBefore = 0;
const counts = { inline: 0, handedOver: 0 };

/** Runs the code step's sandbox: here when the run is small, else (or when it overran here) on the pool. */
export async function runSandboxed(options: PooledSandboxOptions): Promise<SandboxOutcome> {
  // The code too, as for warm contexts: a step whose code was changed starts afresh.
  const key = options.reuseKey === null ? options.code : keyOf(options.reuseKey, options.code);
  if (queued >= MAX_QUEUED || !mayRunHere(options, key)) return runInSandboxPool(options);
  // One run at a time here: the runs a batch of executions starts in one tick take turns.
  queued++;
  const previous = turn;
  let done!: () => void;
  turn = new Promise((resolve) => (done = resolve));
  let outcome: SandboxOutcome | null;
  const lines: string[] = [];
  try {
    await previous;
    // A run before it may have marked the step slow, or used up the thread's share.
    outcome = mayRunHere(options, key) ? await runHere(options, lines) : null;
  } finally {
    queued--;
    done();
  }
  if (outcome === null) return runInSandboxPool(options);
  if (overran(outcome, options)) {
    if (
      outcome.ok ||
      outcome.failure.kind !== 'timeout' ||
      strike(key, outcome.interrupts >= (settings.sliceMs * settings.interruptsPerMs) / 2)
    )
      markSlow(key);
    counts.handedOver++;
    return runInSandboxPool(options);
  }
  struck.delete(key);
  counts.inline++;
  for (const line of lines) if (options.onLog(line)) break;
  return outcome;
}

/** One attempt on this thread under the slice's limits; its console lines go to `lines`, for the caller to keep or drop. */
async function runHere(options: PooledSandboxOptions, lines: string[]): Promise<SandboxOutcome> {
  let bytes = 0;
  let busyMs = 0;
  try {
    return await runInSandbox({
      code: options.code,
      argumentsJson: options.argumentsJson,
      reuseKey: options.reuseKey,
      timeoutMs: Math.min(options.timeoutMs, settings.sliceMs),
      memoryBytes: Math.min(options.memoryBytes, settings.memoryBytes),
      signal: options.cancel,
      // As the pool's worker collects them (sandbox-worker.ts LogBatch): one line past either limit.
      onLog: (line) => {
        lines.push(line);
        bytes += Buffer.byteLength(line);
        return lines.length > options.maxLogLines || bytes > options.maxLogBytes;
      },
      onBusy: (ms) => (busyMs = ms),
    });
  } catch {
    // The host side failed here (the module is replaced for the next run): the pool decides.
    return { interrupts: 0, reused: false, ok: false, failure: { kind: 'reset' } };
  } finally {
    charge(busyMs);
  }
}

/** Whether the outcome is the slice's, not the step's: stopped by a limit lower here than the step's own, or by the host. */
function overran(outcome: SandboxOutcome, options: PooledSandboxOptions): boolean {
  if (outcome.ok) return false;
  switch (outcome.failure.kind) {
    case 'timeout':
      return settings.sliceMs < options.timeoutMs;
    case 'memory':
      return settings.memoryBytes < options.memoryBytes;
    // This thread's stack may be smaller than a pool worker's (sandbox-context.ts MAX_STACK_BYTES).
    case 'stack':
    case 'reset':
      return true;
    default:
      return false;
  }
}

function mayRunHere(options: PooledSandboxOptions, key: string): boolean {
  if (settings.sliceMs <= 0 || options.cancel.aborted) return false;
  if (options.code.length > settings.maxCodeChars || options.argumentsJson.length > settings.maxArgumentsChars) return false;
  const until = slow.get(key);
  if (until !== undefined) {
    if (performance.now() < until) return false;
    slow.delete(key);
  }
  const slot = currentSlot();
  if (!loaded.has(slot)) {
    if (awaited !== slot) {
      awaited = slot;
      void slot.module.then(
        () => loaded.add(slot),
        () => {},
      );
    }
    return false;
  }
  roll(performance.now());
  return spentNow + spentBefore < settings.share * 1000;
}

function charge(ms: number): void {
  roll(performance.now());
  spentNow += ms;
}

/** Moves the one-second windows on to `now`. */
function roll(now: number): void {
  const elapsed = now - windowStart;
  if (elapsed < 1000) return;
  spentBefore = elapsed < 2000 ? spentNow : 0;
  spentNow = 0;
  windowStart = now;
}

/** Counts a stop by the slice's time (`busy`: it had done the slice's work); true when the step should go to the pool. */
function strike(key: string, busy: boolean): boolean {
  const stops = struck.get(key) ?? { stops: 0, busy: 0 };
  stops.stops++;
  if (busy) stops.busy++;
  if (stops.busy >= 2 || stops.stops >= MAX_HELD_UP_STOPS) return true;
  struck.set(key, stops);
  if (struck.size > MAX_SLOW_KEYS) struck.delete(struck.keys().next().value as string);
  return false;
}

function markSlow(key: string): void {
  struck.delete(key);
  slow.delete(key);
  slow.set(key, performance.now() + settings.slowForMs);
  if (slow.size > MAX_SLOW_KEYS) slow.delete(slow.keys().next().value as string);
}

/** Loads this thread's module now, so the next small run runs here (for tests; else the first run goes to the pool while it loads). */
export async function loadInlineModule(): Promise<void> {
  const slot = currentSlot();
  await slot.module;
  loaded.add(slot);
}

/** For tests and the docs' figures: runs finished here, and runs that overran here and went to the pool. */
export function inlineRunCounts(): { inline: number; handedOver: number } {
  return { ...counts };
}

/** For tests: other settings (returns the ones before); forgets which steps overran and the time spent. */
export function tuneInlineRuns(changes: Partial<typeof settings>): typeof settings {
  const previous = { ...settings };
  Object.assign(settings, changes);
  slow.clear();
  struck.clear();
  spentNow = 0;
  spentBefore = 0;
  return previous;
}
