import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import { currentSlot, releaseSlot, type ModuleSlot } from './wasm-module.js';

/**
 * QuickJS mechanics for the code step: a fresh runtime and context per run, limits, JSON in and
 * out, and every way a run can end as a plain `SandboxOutcome` (run-code.ts maps it to the
 * engine's errors). Only strings and JSON cross; the one host function is the console's sink.
 *
 * Compiling is the dear part (about 10 µs per statement in WASM, against 450 µs for a fresh
 * context), so per run only the user's code and the two error classes are compiled; the
 * console is a host function and the helpers that format log lines and describe errors are
 * compiled only by a run that logs or fails.
 */

/**
 * QuickJS measures its stack on the emscripten shadow stack, while its C frames also sit on V8's
 * native stack (984 KiB). Measured on Node 20 from a shallow host stack, the largest limit QuickJS
 * enforces before V8 overflows: 394 KiB for plain recursion, 252 KiB through `toString`, 31 KiB
 * for deeply nested source in the parser. 256 KiB (about 1,350 plain frames) keeps the ordinary
 * cases inside QuickJS; the rest surface as a host RangeError, which costs a module, not the process.
 * Runs now execute on a pool worker (sandbox-pool.ts), whose stack is Node's default 4 MiB: more
 * headroom for the first two cases, while deep source nesting still overflows V8 first.
 */
export const MAX_STACK_BYTES = 256 * 1024;
export const MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
/** A console line is cut to this inside the sandbox, before it is copied out. */
export const MAX_LOG_LINE_CHARS = 64 * 1024;
/** Jobs per `executePendingJobs` call: bounded, so jobs that queue jobs cannot keep the host from its checks. */
const JOB_SLICE = 1000;
/** A long chain of awaits gives the event loop a turn this often, so a cancellation can arrive. */
const YIELD_AFTER_MS = 20;
/** Granted after a failure so the error (out of memory above all) can still be described. */
const DESCRIBE_HEADROOM_BYTES = 4 * 1024 * 1024;
const MAX_MESSAGE_CHARS = 4096;
const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug'];
/** What the user's code is wrapped in; stack columns on its first line are shifted by its length. */
export const CODE_HEADER = '(async (input, nodes, trigger) => {';

/** Compiled on first use of either name (see `defineErrorClasses`); most runs never touch them. */
const ERROR_CLASSES = `(() => {
  class NonRetriableError extends Error {
    constructor(message) { super(message); this.name = 'NonRetriableError'; }
  }
  class RetryAfterError extends Error {
    constructor(message, ms) {
      super(message);
      const delay = Number(ms);
      if (!Number.isFinite(delay) || delay < 0) throw new TypeError('RetryAfterError(message, ms): ms must be a delay in milliseconds, 0 or more');
      this.name = 'RetryAfterError';
      this.retryAfterMs = Math.round(delay);
    }
  }
  const global = (value) => ({ value, writable: true, configurable: true });
  Object.defineProperties(globalThis, { NonRetriableError: global(NonRetriableError), RetryAfterError: global(RetryAfterError) });
  return [NonRetriableError, RetryAfterError];
})()`;
const ERROR_CLASS_NAMES = ['NonRetriableError', 'RetryAfterError'];

/** `stringify` is the context's own JSON.stringify, taken before user code could replace it. */
const HELPERS = `(function (stringify, NonRetriableError, RetryAfterError) {
  'use strict';
  const text = String, clip = (value, max) => (value.length > max ? value.slice(0, max) : value);
  const errorText = (e) => text(e.name) + ': ' + text(e.message) + (typeof e.stack === 'string' && e.stack !== '' ? '\\n' + e.stack.trimEnd() : '');
  // Like Node for simple values; objects as JSON, since nothing richer can leave the sandbox.
  const format = (value) => {
    switch (typeof value) {
      case 'string': return value;
      case 'function': return '[Function: ' + (text(value.name) || '(anonymous)') + ']';
      case 'bigint': return text(value) + 'n';
      case 'object': break;
      default: return text(value);
    }
    if (value instanceof Error) return errorText(value);
    try { return stringify(value) ?? 'undefined'; } catch (error) { return '[not JSON: ' + text(error.message) + ']'; }
  };
  return {
    line() {
      let line = '';
      for (let i = 0; i < arguments.length && line.length <= ${MAX_LOG_LINE_CHARS}; i++) line += (i === 0 ? '' : ' ') + format(arguments[i]);
      return clip(line, ${MAX_LOG_LINE_CHARS});
    },
    describe(error) {
      // Plain literals need no allocation, so these two answers survive an exhausted heap.
      if ((error instanceof InternalError || error instanceof SyntaxError) && error.message === 'out of memory') return 'memory';
      if ((error instanceof InternalError || error instanceof SyntaxError) && error.message === 'stack overflow') return 'stack';
      const isError = error instanceof Error;
      // The classes are undefined when the code never touched them (they are compiled on first use).
      const retryAfter = RetryAfterError !== undefined && error instanceof RetryAfterError;
      return stringify({
        kind: NonRetriableError !== undefined && error instanceof NonRetriableError ? 'non_retriable' : retryAfter ? 'retry_after' : 'error',
        name: isError ? text(error.name) : null,
        message: clip(isError ? text(error.message) : format(error), ${MAX_MESSAGE_CHARS}),
        stack: isError && typeof error.stack === 'string' ? clip(error.stack, ${MAX_MESSAGE_CHARS}) : '',
        retryAfterMs: retryAfter ? Number(error.retryAfterMs) : null,
        line: isError && typeof error.lineNumber === 'number' ? error.lineNumber : null,
      });
    },
  };
})`;

export interface SandboxOptions {
  /** The body of an async function of `(input, nodes, trigger)`. */
  code: string;
  /** `{input, nodes, trigger}` as JSON. */
  argumentsJson: string;
  timeoutMs: number;
  memoryBytes: number;
  /** Only `aborted` is read, from the interrupt handler: in a worker it is the pool's shared flag (sandbox-worker.ts). */
  signal: { readonly aborted: boolean };
  /** Receives each console line; returns true once it wants no more. */
  onLog: (line: string) => boolean;
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
export type SandboxOutcome = { interrupts: number } & (Success | { ok: false; failure: SandboxFailure });

/** A fresh runtime and context made ahead of the next run (see `prepareSpare`). */
interface Spare {
  slot: ModuleSlot;
  runtime: QuickJSRuntime;
  context: QuickJSContext;
}

let spare: Spare | null = null;

/**
 * Makes the next run's runtime and context now, while the thread is idle: building a context
 * (every intrinsic of the language) is about half of a small run's QuickJS time, ~0.25 ms,
 * which a synchronous webhook otherwise waits for. Nothing of a run lives in it: a spare is
 * used once, by the next run, and made fresh. The sandbox worker calls this when its queue is empty.
 */
export async function prepareSpare(): Promise<void> {
  if (spare !== null) return;
  const slot = currentSlot();
  const module = await slot.module;
  if (spare !== null || slot.poisoned || slot.retired) return;
  const runtime = module.newRuntime({ maxStackSizeBytes: MAX_STACK_BYTES });
  try {
    spare = { slot, runtime, context: runtime.newContext() };
  } catch {
    runtime.dispose();
  }
}

/** The spare for `slot`, if one was made there (a spare of a replaced module is dropped). */
function takeSpare(slot: ModuleSlot): Omit<Spare, 'slot'> | undefined {
  const taken = spare;
  spare = null;
  if (taken === null) return undefined;
  if (taken.slot === slot && !slot.poisoned) return taken;
  if (!taken.slot.poisoned) {
    taken.context.dispose();
    taken.runtime.dispose();
  }
  return undefined;
}

export async function runInSandbox(options: SandboxOptions): Promise<SandboxOutcome> {
  const slot = currentSlot();
  const module = await slot.module;
  let run: SandboxRun | undefined;
  try {
    run = new SandboxRun(module, slot, options, takeSpare(slot));
    const result = await run.execute();
    // A host exception swallowed inside a callback still leaves the module suspect.
    if (run.fatal !== undefined) throw run.fatal;
    return { interrupts: run.interrupts, ...('kind' in result ? { ok: false, failure: result } : result) };
  } catch (error) {
    slot.poisoned = true;
    if (error instanceof RangeError && /call stack/i.test(error.message)) return { interrupts: run?.interrupts ?? 0, ok: false, failure: { kind: 'stack' } };
    throw error;
  } finally {
    // Freeing objects in a poisoned module could trip its allocator; the whole module is dropped instead.
    if (run !== undefined && !slot.poisoned) run.dispose();
    releaseSlot(slot);
  }
}

class SandboxRun {
  interrupts = 0;
  /** Bytes the WASM memory may still grow by while this run executes. */
  growBudget: number;
  /** Set when the memory refused to grow for this run: whatever error follows, the run ran out of memory. */
  memoryExhausted = false;
  /** A host exception caught in a callback (which must not throw into the sandbox). */
  fatal: unknown;
  private stoppedBy: 'timeout' | 'cancelled' | null = null;
  private logsFull = false;
  private readonly handles: QuickJSHandle[] = [];
  private readonly deadline: number;
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private json!: { object: QuickJSHandle; parse: QuickJSHandle; stringify: QuickJSHandle };
  private errorClasses: QuickJSHandle | undefined;
  private helpers: { line: QuickJSHandle; describe: QuickJSHandle } | undefined;

  constructor(
    module: QuickJSWASMModule,
    private readonly slot: ModuleSlot,
    private readonly options: SandboxOptions,
    prepared?: { runtime: QuickJSRuntime; context: QuickJSContext },
  ) {
    // Wall time, not the injected Clock: the limit is about real CPU spent, which a test clock never advances.
    this.deadline = performance.now() + options.timeoutMs;
    this.growBudget = options.memoryBytes;
    slot.active = this;
    if (prepared) {
      this.runtime = prepared.runtime;
      this.runtime.setMemoryLimit(options.memoryBytes);
    } else {
      this.runtime = module.newRuntime({ memoryLimitBytes: options.memoryBytes, maxStackSizeBytes: MAX_STACK_BYTES });
    }
    // Called every ~10,000 interpreter steps (about twice per ms of busy code): the count doubles as a work measure.
    this.runtime.setInterruptHandler(() => {
      this.interrupts++;
      return this.limitReached() !== null || this.fatal !== undefined;
    });
    if (prepared) {
      this.context = prepared.context;
      return;
    }
    try {
      this.context = this.runtime.newContext();
    } catch (error) {
      this.runtime.dispose();
      throw error;
    }
  }

  async execute(): Promise<Success | SandboxFailure> {
    const ctx = this.context;
    const object = this.keep(ctx.getProp(ctx.global, 'JSON'));
    this.json = { object, parse: this.keep(ctx.getProp(object, 'parse')), stringify: this.keep(ctx.getProp(object, 'stringify')) };
    const write = this.keep(ctx.newFunction('log', (...args) => this.guard(() => this.write(args))));
    const console = this.keep(ctx.newObject());
    for (const method of CONSOLE_METHODS) ctx.setProp(console, method, write);
    ctx.setProp(ctx.global, 'console', console);
    this.defineErrorClasses();

    // The header shares the body's first line, so QuickJS's line numbers are the body's own.
    const compiled = ctx.evalCode(`${CODE_HEADER}${this.options.code}\n})`, 'code.js', { type: 'global' });
    if (compiled.error) return this.failure(this.keep(compiled.error), 'compile');
    const parsed = ctx.callFunction(this.json.parse, object, this.keep(ctx.newString(this.options.argumentsJson)));
    if (parsed.error) return this.failure(this.keep(parsed.error), 'run');
    const args = ['input', 'nodes', 'trigger'].map((name) => this.keep(ctx.getProp(this.keep(parsed.value), name)));
    const started = ctx.callFunction(this.keep(compiled.value), ctx.undefined, ...args);
    if (started.error) return this.failure(this.keep(started.error), 'run');
    const settled = await this.settle(this.keep(started.value));
    return 'kind' in settled ? settled : this.serialize(settled.value);
  }

  /** Runs queued jobs until the user's promise settles, a limit is hit, or nothing is left that could settle it. */
  private async settle(promise: QuickJSHandle): Promise<{ value: QuickJSHandle } | SandboxFailure> {
    let sliceStart = performance.now();
    for (;;) {
      const state = this.context.getPromiseState(promise);
      if (state.type === 'fulfilled') return this.stopped() ?? { value: this.keep(state.value) };
      if (state.type === 'rejected') return this.failure(this.keep(state.error), 'run');
      const stopped = this.stopped();
      if (stopped) return stopped;
      // No timers or I/O exist in the sandbox: with no job queued, nothing can ever settle the promise.
      if (!this.runtime.hasPendingJob()) return { kind: 'never_settles' };
      const ran = this.runtime.executePendingJobs(JOB_SLICE);
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
    const ctx = this.context;
    const type = ctx.typeof(value);
    if (type === 'function' || type === 'symbol' || type === 'bigint') return { kind: 'not_json', message: `a ${type} is not a JSON value` };
    let json = 'null';
    if (type !== 'undefined') {
      const result = ctx.callFunction(this.json.stringify, this.json.object, value);
      if (result.error) return this.failure(this.keep(result.error), 'output');
      const stopped = this.stopped();
      if (stopped) return stopped;
      const text = this.keep(result.value);
      if (ctx.typeof(text) === 'string') {
        // Measured before copying: a 200 MB string should not cross just to be refused.
        const length = ctx.getNumber(this.keep(ctx.getProp(text, 'length')));
        if (length > MAX_OUTPUT_BYTES) return { kind: 'too_large', bytes: length, atLeast: true };
        json = ctx.getString(text);
      }
    }
    const bytes = Buffer.byteLength(json);
    if (bytes > MAX_OUTPUT_BYTES) return { kind: 'too_large', bytes, atLeast: false };
    return { ok: true, json, memoryBytes: this.memoryUsed() };
  }

  /** Classifies an error value from the sandbox; a limit that stopped the run wins over whatever surfaced. */
  private failure(error: QuickJSHandle, phase: 'compile' | 'run' | 'output'): SandboxFailure {
    const stopped = this.stopped();
    if (stopped) return stopped;
    if (this.memoryExhausted) return { kind: 'memory' };
    this.runtime.setMemoryLimit(this.options.memoryBytes + DESCRIBE_HEADROOM_BYTES);
    this.growBudget += DESCRIBE_HEADROOM_BYTES;
    const helpers = this.loadHelpers();
    const described = helpers && this.context.callFunction(helpers.describe, this.context.undefined, error);
    const text = described?.error === undefined && described ? this.context.getString(this.keep(described.value)) : undefined;
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
    const { line = null, ...thrown } = parsed ?? { kind: 'error', name: null, message: 'the code threw a value that could not be described', stack: '', retryAfterMs: null };
    if (phase === 'compile') return { kind: 'syntax', message: thrown.message, line };
    if (phase === 'output') return { kind: 'not_json', message: thrown.message };
    return { kind: 'thrown', error: thrown };
  }

  private write(args: QuickJSHandle[]): void {
    if (this.logsFull) return;
    const helpers = this.loadHelpers();
    const line = helpers && this.context.callFunction(helpers.line, this.context.undefined, ...args);
    if (!line) return;
    if (line.error) return line.error.dispose();
    const text = this.context.typeof(line.value) === 'string' ? this.context.getString(line.value) : '';
    line.value.dispose();
    this.logsFull = this.options.onLog(text);
  }

  private loadHelpers(): { line: QuickJSHandle; describe: QuickJSHandle } | undefined {
    if (this.helpers) return this.helpers;
    const ctx = this.context;
    const factory = ctx.evalCode(HELPERS, 'prelude.js', { type: 'global' });
    if (factory.error) return void this.keep(factory.error);
    const classes = [0, 1].map((index) => (this.errorClasses ? this.keep(ctx.getProp(this.errorClasses, index)) : ctx.undefined));
    const made = ctx.callFunction(this.keep(factory.value), ctx.undefined, this.json.stringify, ...classes);
    if (made.error) return void this.keep(made.error);
    const object = this.keep(made.value);
    this.helpers = { line: this.keep(ctx.getProp(object, 'line')), describe: this.keep(ctx.getProp(object, 'describe')) };
    return this.helpers;
  }

  /**
   * The error classes cost a quarter of a run's setup to compile, so the globals start as
   * accessors that compile them on first touch; the compiled code then replaces the accessors
   * with ordinary writable properties.
   */
  private defineErrorClasses(): void {
    const ctx = this.context;
    // Once compiled, the names are data properties; reading them through the global would otherwise re-enter the accessor.
    const load = (): boolean => {
      if (this.errorClasses === undefined) {
        const made = ctx.evalCode(ERROR_CLASSES, 'prelude.js', { type: 'global' });
        if (made.error) made.error.dispose();
        else this.errorClasses = this.keep(made.value);
      }
      return this.errorClasses !== undefined;
    };
    for (const name of ERROR_CLASS_NAMES) {
      ctx.defineProp(ctx.global, name, {
        configurable: true,
        enumerable: false,
        get: () => this.guard(() => (load() ? ctx.getProp(ctx.global, name) : undefined)) ?? ctx.undefined,
        set: (value) => void this.guard(() => load() && ctx.setProp(ctx.global, name, value)),
      });
    }
  }

  /** Host callbacks must not throw: quickjs-emscripten would hand the host error, stack and all, to user code. */
  private guard<T>(callback: () => T): T | undefined {
    try {
      return callback();
    } catch (error) {
      this.fatal ??= error;
      return undefined;
    }
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

  /** `memory used` from QuickJS's report (it walks the heap, so unlike its limit it counts real bytes). */
  private memoryUsed(): number {
    const match = /^memory used\s+\d+\s+(\d+)/m.exec(this.runtime.dumpMemoryUsage());
    return match ? Number(match[1]) : 0;
  }

  private keep(handle: QuickJSHandle): QuickJSHandle {
    this.handles.push(handle);
    return handle;
  }

  /** Every handle goes before the runtime, or QuickJS aborts on objects still alive. */
  dispose(): void {
    if (this.slot.active === this) this.slot.active = null;
    try {
      for (const handle of this.handles) if (handle.alive) handle.dispose();
      this.context.dispose();
      this.runtime.dispose();
    } catch {
      this.slot.poisoned = true;
    }
  }
}
