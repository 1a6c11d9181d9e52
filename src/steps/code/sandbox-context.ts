import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import type { ModuleSlot } from './wasm-module.js';

/**
 * One QuickJS runtime and context, made ready for user code: the console, the two error
 * classes, the context's own JSON functions (taken before any user code could replace them) and
 * the user's function once compiled. A context serves one run at a time; with a reuse key it
 * may serve later runs of the same step (warm-contexts.ts), so everything that belongs to a run
 * (limits, logs, handles) lives in the run (sandbox.ts), which the host callbacks reach
 * through `current`.
 */

/**
 * QuickJS measures its stack on the emscripten shadow stack, while its C frames also sit on V8's
 * native stack (984 KiB). Measured on Node 20 from a shallow host stack, the largest limit QuickJS
 * enforces before V8 overflows: 394 KiB for plain recursion, 252 KiB through `toString`, 31 KiB
 * for deeply nested source in the parser. 256 KiB (about 1,350 plain frames) keeps the ordinary
 * cases inside QuickJS; the rest surface as a host RangeError, which costs a module, not the process.
 * Runs that outgrow the main thread's slice execute on a pool worker (sandbox-pool.ts), whose
 * stack is Node's default 4 MiB: more headroom for the first two cases, while deep source
 * nesting still overflows V8 first. A run stopped for its stack on the main thread
 * (inline-runs.ts) runs again on a pool worker, so a step gets the worker's headroom either way.
 */
export const MAX_STACK_BYTES = 256 * 1024;
/** A console line is cut to this inside the sandbox, before it is copied out. */
export const MAX_LOG_LINE_CHARS = 64 * 1024;
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

/**
 * Made once per context, after the console and the error classes and before any user code: a
 * function that deletes every global property added since, and answers whether all went (1)
 * or not (0: one was made non-configurable, and the context must not serve another run). The
 * built-ins it calls are taken now, so code that replaces `Reflect` later cannot stop it, and the
 * baseline is a null-prototype object read with `in` (no call: about 16 µs for the ~60 globals,
 * against 35 µs through `Set.prototype.has`). It is compiled with every new context, so it is
 * kept short: a variant that first compared the key list's length, first and last keys with the
 * baseline's (4 µs against 10-13 µs for this walk on a warm context) cost ~33 µs more to make
 * each context (QuickJS compiles it each time), which a step that never reuses its context pays
 * on every run.
 */
const GLOBALS_SWEEP = `(() => {
  const ownKeys = Reflect.ownKeys, remove = Reflect.deleteProperty, g = globalThis, baseline = Object.create(null);
  for (const key of ownKeys(g)) baseline[key] = true;
  return () => {
    let clean = true;
    const keys = ownKeys(g);
    for (let i = 0; i < keys.length; i++) if (!(keys[i] in baseline) && !remove(g, keys[i])) clean = false;
    return clean ? 1 : 0;
  };
})()`;

/** What the context asks of the run it serves. */
export interface ContextRun {
  /** The interrupt handler's question, about twice per ms of busy code: stop now? */
  interrupted(): boolean;
  /** A console call's arguments, formatted by the run (it knows its limits). */
  log(args: QuickJSHandle[]): void;
}

export class SandboxContext {
  /** The run executing here now; host callbacks act for it. */
  current: ContextRun | null = null;
  /** Runs started here, this one included. */
  runs = 0;
  /** A host exception caught in a callback (which must not throw into the sandbox): the module is suspect. */
  fatal: unknown;
  readonly json: { object: QuickJSHandle; parse: QuickJSHandle; stringify: QuickJSHandle };
  private readonly own: QuickJSHandle[] = [];
  private errorClasses: QuickJSHandle | undefined;
  private helpers: { line: QuickJSHandle; describe: QuickJSHandle } | undefined;
  private sweep: QuickJSHandle | undefined;
  private compiled: { code: string; fn: QuickJSHandle } | undefined;

  /**
   * A fresh runtime and context, set up. Throws if QuickJS cannot make them; a failure during the
   * set-up leaves handles alive, which cannot be freed safely, so the caller must then mark the
   * module suspect (as every host failure does) and free nothing.
   */
  static create(module: QuickJSWASMModule, slot: ModuleSlot): SandboxContext {
    const runtime = module.newRuntime({ maxStackSizeBytes: MAX_STACK_BYTES });
    let context: QuickJSContext;
    try {
      context = runtime.newContext();
    } catch (error) {
      runtime.dispose();
      throw error;
    }
    return new SandboxContext(slot, runtime, context);
  }

  private constructor(
    readonly slot: ModuleSlot,
    readonly runtime: QuickJSRuntime,
    readonly context: QuickJSContext,
  ) {
    // The runtime makes its memory report in this context; unset, it would make a context of its own for it.
    runtime.context = context;
    // Called every ~10,000 interpreter steps (about twice per ms of busy code).
    runtime.setInterruptHandler(() => (this.current === null ? false : this.current.interrupted()) || this.fatal !== undefined);
    const ctx = context;
    const object = this.keep(ctx.getProp(ctx.global, 'JSON'));
    this.json = { object, parse: this.keep(ctx.getProp(object, 'parse')), stringify: this.keep(ctx.getProp(object, 'stringify')) };
    const write = this.keep(ctx.newFunction('log', (...args) => this.guard(() => this.current?.log(args))));
    const console = this.keep(ctx.newObject());
    for (const method of CONSOLE_METHODS) ctx.setProp(console, method, write);
    ctx.setProp(ctx.global, 'console', console);
    this.defineErrorClasses();
    const sweep = ctx.evalCode(GLOBALS_SWEEP, 'prelude.js', { type: 'global' });
    if (sweep.error) sweep.error.dispose();
    else this.sweep = this.keep(sweep.value);
  }

  /** The user's function for `code`, compiled on the first run here; `{error}` (the run's to free) when it does not compile. */
  compile(code: string): { fn: QuickJSHandle } | { error: QuickJSHandle } {
    if (this.compiled?.code === code) return { fn: this.compiled.fn };
    // A context is kept for one step's code (warm-contexts.ts keys it so): another code here means a fresh context.
    if (this.compiled !== undefined) throw new Error('a sandbox context compiles one code');
    // The header shares the body's first line, so QuickJS's line numbers are the body's own.
    const result = this.context.evalCode(`${CODE_HEADER}${code}\n})`, 'code.js', { type: 'global' });
    if (result.error) return { error: result.error };
    this.compiled = { code, fn: this.keep(result.value) };
    return { fn: this.compiled.fn };
  }

  /**
   * After a run that succeeded: removes the globals it added and answers whether the context
   * can serve another run of the same step (nothing left queued, every added global gone).
   */
  tidy(): boolean {
    if (this.fatal !== undefined || this.sweep === undefined || this.runtime.hasPendingJob()) return false;
    const swept = this.context.callFunction(this.sweep, this.context.undefined);
    if (swept.error) {
      swept.error.dispose();
      return false;
    }
    // A number, read without the JSON round trip `dump` makes of a boolean.
    const clean = this.context.getNumber(swept.value) === 1;
    swept.value.dispose();
    return clean;
  }

  /** The formatting and error-describing helpers, compiled on first need (a run that logs or fails). */
  loadHelpers(): { line: QuickJSHandle; describe: QuickJSHandle } | undefined {
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
   * `memory_used_size` of QuickJS's memory report (it walks the heap, so unlike its limit it
   * counts real bytes), read from the report's object: 7 µs here, against 12 µs for its text
   * (`dumpMemoryUsage`), with the same figure. The object is made in this context (see the
   * constructor) and freed at once; a runtime at its memory limit cannot make it, and then the
   * text, which QuickJS writes outside the runtime's heap, gives the figure.
   */
  memoryUsed(): number {
    const ctx = this.context;
    const report = this.runtime.computeMemoryUsage();
    let bytes: number | undefined;
    try {
      const used = ctx.getProp(report, 'memory_used_size');
      if (ctx.typeof(used) === 'number') bytes = ctx.getNumber(used);
      used.dispose();
    } finally {
      report.dispose();
    }
    return bytes ?? Number(/^memory used\s+\d+\s+(\d+)/m.exec(this.runtime.dumpMemoryUsage())?.[1] ?? 0);
  }

  /** Every handle goes before the runtime, or QuickJS aborts on objects still alive; a failure marks the module suspect. */
  dispose(): void {
    if (this.slot.poisoned) return; // freeing objects in a poisoned module could trip its allocator: the module goes whole
    try {
      for (const handle of this.own) if (handle.alive) handle.dispose();
      this.context.dispose();
      this.runtime.dispose();
    } catch {
      this.slot.poisoned = true;
    }
  }

  /**
   * The error classes cost a quarter of a fresh context's setup to compile, so the globals
   * start as accessors that compile them on first touch; the compiled code then replaces the
   * accessors with ordinary writable properties.
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

  private keep(handle: QuickJSHandle): QuickJSHandle {
    this.own.push(handle);
    return handle;
  }
}
