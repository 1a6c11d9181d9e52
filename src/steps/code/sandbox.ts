import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { QuickJSHandle } from 'quickjs-emscripten';
import { SandboxContext, type ContextRun } from './sandbox-context.js';
import { currentSlot, releaseSlot, type ModuleSlot } from './wasm-module.js';
import { dropWarm, keepWarm, MAX_KEPT_HEAP_BYTES, MAX_RUNS_PER_CONTEXT, takeWarm } from './warm-contexts.js';

export { CODE_HEADER } from './sandbox-context.js';

/**
 * QuickJS mechanics for the code step: limits, JSON in and out, and every way a run can end as
 * a plain `SandboxOutcome` (run-code.ts maps it to the engine's errors). Only strings and JSON
 * cross; the one host function is the console's sink.
 *
 * A run gets a context (sandbox-context.ts) three ways: a warm one an earlier run of the same
 * step left (warm-contexts.ts), the spare made while the thread was idle, or a fresh one. Making
 * a context (every intrinsic of the language) is the dear part, about 0.25 ms, against about
 * 10 µs per statement compiled; so a fresh context compiles only the user's code, and the
 * helpers that format log lines and describe errors are compiled only by a run that logs or fails.
 */

export const MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
/** Jobs per `executePendingJobs` call: bounded, so jobs that queue jobs cannot keep the host from its checks. */
const JOB_SLICE = 1000;
/** A long chain of awaits gives the event loop a turn this often, so a cancellation can arrive. */
const YIELD_AFTER_MS = 20;
/** Granted after a failure so the error (out of memory above all) can still be described. */
const DESCRIBE_HEADROOM_BYTES = 4 * 1024 * 1024;

export interface SandboxOptions {
  /** The body of an async function of `(input, nodes, trigger)`. */
  code: string;
  /** `{input, nodes, trigger}` as JSON. */
  argumentsJson: string;
  /**
   * Runs with the same key and code may share a context, one after the other (see
   * warm-contexts.ts; run-code.ts makes the key from the workspace, workflow and node). Null:
   * a fresh context, freed after the run.
   */
  reuseKey: string | null;
  timeoutMs: number;
  memoryBytes: number;
  /** Only `aborted` is read, from the interrupt handler: in a worker it is the pool's shared flag (sandbox-worker.ts). */
  signal: { readonly aborted: boolean };
  /** Receives each console line; returns true once it wants no more. */
  onLog: (line: string) => boolean;
  /**
   * Told, when the run ends, how long it held this thread: its work up to its first await and
   * its result's serialization, without the turns other work got in between (inline-runs.ts
   * budgets its thread's time by it; a run that yields, past YIELD_AFTER_MS, counts its first
   * stretch only, which is already more than any inline slice).
   */
  onBusy?: (ms: number) => void;
}

export interface ThrownError {
  /** The user code's own `NonRetriableError`/`RetryAfterError`, or anything else it threw. */
  kind: 'error' | 'non_retriable' | 'retry_after';
  name: string | null;
  message: string;
  stack: string;
  retryAfterMs: number | null;
}

export type SandboxFailure =
  | { kind: 'syntax'; message: string; line: number | null }
  | { kind: 'thrown'; error: ThrownError }
  | { kind: 'timeout' | 'cancelled' | 'never_settles' | 'memory' | 'stack' | 'reset' }
  | { kind: 'not_json'; message: string }
  | { kind: 'too_large'; bytes: number; atLeast: boolean };

type Success = { ok: true; json: string; memoryBytes: number };
/** `reused`: the run had a warm context of an earlier run of its step. */
export type SandboxOutcome = { interrupts: number; reused: boolean } & (Success | { ok: false; failure: SandboxFailure });

let spare: SandboxContext | null = null;

/**
 * Makes a context now, while the thread is idle, for the next run that finds no warm one: a
 * step's first run, or a run with no reuse key, then does not wait for it. Nothing of a run
 * lives in it. The sandbox worker calls this when its queue is empty.
 */
export async function prepareSpare(): Promise<void> {
  if (spare !== null) return;
  const slot = currentSlot();
  const module = await slot.module;
  if (spare !== null || slot.poisoned || slot.retired) return;
  try {
    spare = SandboxContext.create(module, slot);
  } catch {
    // The next run gets a fresh module (what failed may have left it half-updated) and makes its own context.
    slot.poisoned = true;
  }
}

/** The spare for `slot`, if one was made there (a spare of a replaced module is dropped). */
function takeSpare(slot: ModuleSlot): SandboxContext | undefined {
  const taken = spare;
  spare = null;
  if (taken === null) return undefined;
  if (taken.slot === slot && !slot.poisoned) return taken;
  taken.dispose();
  return undefined;
}

export async function runInSandbox(options: SandboxOptions): Promise<SandboxOutcome> {
  const slot = currentSlot();
  const module = await slot.module;
  let context: SandboxContext | undefined;
  let run: SandboxRun | undefined;
  /** The key to keep the context under for the step's next run; null: it is freed. */
  let keepFor: string | null = null;
  try {
    const warm = options.reuseKey === null ? undefined : takeWarm(options.reuseKey, options.code, slot);
    context = warm ?? takeSpare(slot) ?? SandboxContext.create(module, slot);
    run = new SandboxRun(slot, context, options);
    const result = await run.execute();
    // A host exception swallowed inside a callback still leaves the module suspect.
    if (context.fatal !== undefined) throw context.fatal;
    if ('kind' in result) return { interrupts: run.interrupts, reused: warm !== undefined, ok: false, failure: result };
    if (options.reuseKey !== null && run.leavesContextReusable(result.memoryBytes)) keepFor = options.reuseKey;
    return { interrupts: run.interrupts, reused: warm !== undefined, ok: true, json: result.json, memoryBytes: result.memoryBytes };
  } catch (error) {
    slot.poisoned = true;
    if (error instanceof RangeError && /call stack/i.test(error.message))
      return { interrupts: run?.interrupts ?? 0, reused: false, ok: false, failure: { kind: 'stack' } };
    throw error;
  } finally {
    // Freeing objects in a poisoned module could trip its allocator; the whole module is dropped instead.
    run?.end();
    if (run !== undefined) options.onBusy?.(run.busyMs);
    if (context !== undefined && keepFor !== null) keepWarm(keepFor, options.code, context);
    else context?.dispose();
    releaseSlot(slot);
    if (slot.poisoned || slot.retired) dropWarm(slot);
  }
}

class SandboxRun implements ContextRun {
  interrupts = 0;
  /** Time the run held the thread (see SandboxOptions.onBusy). */
  busyMs = 0;
  /** Bytes the WASM memory may still grow by while this run executes. */
  growBudget: number;
  /** Set when the memory refused to grow for this run: whatever error follows, the run ran out of memory. */
  memoryExhausted = false;
  private stoppedBy: 'timeout' | 'cancelled' | null = null;
  private logsFull = false;
  /** This run's handles; the context's own live as long as it does. */
  private readonly handles: QuickJSHandle[] = [];
  private readonly deadline: number;

  constructor(
    private readonly slot: ModuleSlot,
    private readonly sandbox: SandboxContext,
    private readonly options: SandboxOptions,
  ) {
    // Wall time, not the injected Clock: the limit is about real CPU spent, which a test clock never advances.
    this.deadline = performance.now() + options.timeoutMs;
    this.growBudget = options.memoryBytes;
    slot.active = this;
    sandbox.current = this;
    sandbox.runs++;
    sandbox.runtime.setMemoryLimit(options.memoryBytes);
  }

  execute(): Promise<Success | SandboxFailure> {
    // Runs until its first await (settle's end, or its first yield), which is timed here.
    const begun = performance.now();
    const running = this.executeSteps();
    this.busyMs += performance.now() - begun;
    return running;
  }

  private async executeSteps(): Promise<Success | SandboxFailure> {
    const { context: ctx, json } = this.sandbox;
    const compiled = this.sandbox.compile(this.options.code);
    if ('error' in compiled) return this.failure(this.keep(compiled.error), 'compile');
    const parsed = ctx.callFunction(json.parse, json.object, this.keep(ctx.newString(this.options.argumentsJson)));
    if (parsed.error) return this.failure(this.keep(parsed.error), 'run');
    const args = ['input', 'nodes', 'trigger'].map((name) => this.keep(ctx.getProp(this.keep(parsed.value), name)));
    const started = ctx.callFunction(compiled.fn, ctx.undefined, ...args);
    if (started.error) return this.failure(this.keep(started.error), 'run');
    const settled = await this.settle(this.keep(started.value));
    if ('kind' in settled) return settled;
    const begun = performance.now();
    const serialized = this.serialize(settled.value);
    this.busyMs += performance.now() - begun;
    return serialized;
  }

  /**
   * After a success: whether the context may serve the step's next run. Not when it has served
   * its share of runs or holds a large heap, nor when the run left jobs queued or a global that
   * cannot be removed (SandboxContext.tidy removes the others now).
   */
  leavesContextReusable(memoryBytes: number): boolean {
    if (this.sandbox.runs >= MAX_RUNS_PER_CONTEXT || memoryBytes > MAX_KEPT_HEAP_BYTES) return false;
    return this.sandbox.tidy() && this.stopped() === null;
  }

  /** The interrupt handler's question, about twice per ms of busy code (the count doubles as a work measure). */
  interrupted(): boolean {
    this.interrupts++;
    return this.limitReached() !== null;
  }

  /** A console call: formatted inside the sandbox, handed to `onLog` until it wants no more. */
  log(args: QuickJSHandle[]): void {
    if (this.logsFull) return;
    const ctx = this.sandbox.context;
    const helpers = this.sandbox.loadHelpers();
    const line = helpers && ctx.callFunction(helpers.line, ctx.undefined, ...args);
    if (!line) return;
    if (line.error) return line.error.dispose();
    const text = ctx.typeof(line.value) === 'string' ? ctx.getString(line.value) : '';
    line.value.dispose();
    this.logsFull = this.options.onLog(text);
  }

  /** The run is over: its handles go (unless the module is suspect) and the context serves nobody until the next run. */
  end(): void {
    if (this.slot.active === this) this.slot.active = null;
    if (this.sandbox.current === this) this.sandbox.current = null;
    if (this.slot.poisoned) return;
    try {
      for (const handle of this.handles) if (handle.alive) handle.dispose();
    } catch {
      this.slot.poisoned = true;
    }
  }

  /** Runs queued jobs until the user's promise settles, a limit is hit, or nothing is left that could settle it. */
  private async settle(promise: QuickJSHandle): Promise<{ value: QuickJSHandle } | SandboxFailure> {
    const { context, runtime } = this.sandbox;
    let sliceStart = performance.now();
    for (;;) {
      const state = context.getPromiseState(promise);
      // Kept before anything else: a run stopped at this point must still free the value, or
      // QuickJS aborts when its context is freed (an object left alive) and the module is replaced.
      if (state.type === 'fulfilled') {
        const value = this.keep(state.value);
        return this.stopped() ?? { value };
      }
      if (state.type === 'rejected') return this.failure(this.keep(state.error), 'run');
      const stopped = this.stopped();
      if (stopped) return stopped;
      // No timers or I/O exist in the sandbox: with no job queued, nothing can ever settle the promise.
      if (!runtime.hasPendingJob()) return { kind: 'never_settles' };
      const ran = runtime.executePendingJobs(JOB_SLICE);
      if (ran.error) return this.failure(this.keep(ran.error), 'run');
      if (performance.now() - sliceStart > YIELD_AFTER_MS) {
        await yieldToEventLoop();
        if (this.slot.poisoned) return { kind: 'reset' };
        this.slot.active = this;
        sliceStart = performance.now();
      }
    }
  }

  /** The result as JSON text, made inside the sandbox so only JSON leaves it. */
  private serialize(value: QuickJSHandle): Success | SandboxFailure {
    const { context: ctx, json: jsonFunctions } = this.sandbox;
    const type = ctx.typeof(value);
    if (type === 'function' || type === 'symbol' || type === 'bigint')
      return { kind: 'not_json', message: `a ${type} is not a JSON value` };
    let json = 'null';
    if (type !== 'undefined') {
      const result = ctx.callFunction(jsonFunctions.stringify, jsonFunctions.object, value);
      if (result.error) return this.failure(this.keep(result.error), 'output');
      const text = this.keep(result.value);
      const stopped = this.stopped();
      if (stopped) return stopped;
      if (ctx.typeof(text) === 'string') {
        // Measured before copying: a 200 MB string should not cross just to be refused.
        const length = ctx.getNumber(this.keep(ctx.getProp(text, 'length')));
        if (length > MAX_OUTPUT_BYTES) return { kind: 'too_large', bytes: length, atLeast: true };
        json = ctx.getString(text);
      }
    }
    const bytes = Buffer.byteLength(json);
    if (bytes > MAX_OUTPUT_BYTES) return { kind: 'too_large', bytes, atLeast: false };
    return { ok: true, json, memoryBytes: this.sandbox.memoryUsed() };
  }

  /** Classifies an error value from the sandbox; a limit that stopped the run wins over whatever surfaced. */
  private failure(error: QuickJSHandle, phase: 'compile' | 'run' | 'output'): SandboxFailure {
    const stopped = this.stopped();
    if (stopped) return stopped;
    if (this.memoryExhausted) return { kind: 'memory' };
    const ctx = this.sandbox.context;
    this.sandbox.runtime.setMemoryLimit(this.options.memoryBytes + DESCRIBE_HEADROOM_BYTES);
    this.growBudget += DESCRIBE_HEADROOM_BYTES;
    const helpers = this.sandbox.loadHelpers();
    const described = helpers && ctx.callFunction(helpers.describe, ctx.undefined, error);
    const text = described?.error === undefined && described ? ctx.getString(this.keep(described.value)) : undefined;
    if (described?.error) this.keep(described.error);
    const stoppedWhileDescribing = this.stopped();
    if (stoppedWhileDescribing) return stoppedWhileDescribing;
    if (text === 'memory' || text === 'stack') return { kind: text };
    let parsed: (ThrownError & { line: number | null }) | undefined;
    try {
      parsed = text === undefined ? undefined : (JSON.parse(text) as ThrownError & { line: number | null });
    } catch {
      parsed = undefined;
    }
    const { line = null, ...thrown } = parsed ?? {
      kind: 'error',
      name: null,
      message: 'the code threw a value that could not be described',
      stack: '',
      retryAfterMs: null,
    };
    if (phase === 'compile') return { kind: 'syntax', message: thrown.message, line };
    if (phase === 'output') return { kind: 'not_json', message: thrown.message };
    return { kind: 'thrown', error: thrown };
  }

  private limitReached(): 'timeout' | 'cancelled' | null {
    if (this.stoppedBy === null) {
      if (this.options.signal.aborted) this.stoppedBy = 'cancelled';
      else if (performance.now() > this.deadline) this.stoppedBy = 'timeout';
    }
    return this.stoppedBy;
  }

  private stopped(): SandboxFailure | null {
    const reason = this.limitReached();
    return reason === null ? null : { kind: reason };
  }

  private keep(handle: QuickJSHandle): QuickJSHandle {
    this.handles.push(handle);
    return handle;
  }
}
