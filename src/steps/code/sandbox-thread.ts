import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SandboxOutcome } from './sandbox.js';
import type { RunRequest, SandboxWorkerData, WorkerMessage } from './sandbox-protocol.js';

/** A finished run as the main thread sees it; lines go to run-code's LogCapture afterwards. */
export interface ThreadResult {
  outcome: SandboxOutcome;
  logs: string[];
}

type StopKind = 'timeout' | 'cancelled';

interface InFlight {
  request: RunRequest;
  graceMs: number;
  signal: AbortSignal;
  onAbort: () => void;
  watchdog: NodeJS.Timeout | undefined;
  resolve: (result: ThreadResult) => void;
  reject: (error: Error) => void;
}

/** An outcome the main thread decides on its own, when the worker did not (or could not) answer. */
export const stoppedOutcome = (kind: StopKind): SandboxOutcome => ({ interrupts: 0, ok: false, failure: { kind } });

/**
 * One worker thread of the pool and the run it executes. The worker stops its own run at the
 * deadline or when the shared flag says so; the watchdog here is for a worker that stopped
 * answering (stuck in one long host call), which is then terminated and reported as gone.
 */
export class SandboxThread {
  readonly worker: Worker;
  /** WASM modules the worker has loaded, as last reported. */
  modulesLoaded = 0;
  private readonly cancelledRun = new Int32Array(new SharedArrayBuffer(4));
  private ready = false;
  private gone = false;
  private current: InFlight | null = null;
  private exitError: Error | undefined;

  /** `onGone` is called once, when the worker is no longer usable (crashed, terminated, closed). */
  constructor(private readonly onGone: (thread: SandboxThread) => void) {
    const { entry, options } = workerScript();
    this.worker = new Worker(entry, { ...options, workerData: { cancelledRun: this.cancelledRun.buffer } satisfies SandboxWorkerData });
    // Held only while a run is in flight (see run): an idle pool must never keep the process alive.
    this.worker.unref();
    this.worker.on('message', (message: WorkerMessage) => this.receive(message));
    // Comes just before 'exit' when the worker throws: its message says more than the exit code.
    this.worker.on('error', (error) => {
      this.exitError ??= error;
    });
    this.worker.on('exit', (code) => {
      const cause = this.exitError?.message ?? `its worker thread exited with code ${code}`;
      this.leave()?.reject(new Error(cause));
    });
  }

  get busy(): boolean {
    return this.current !== null;
  }

  /** `graceMs`: how long past its deadline or its cancel the run may go unanswered before the worker is given up. */
  run(request: RunRequest, signal: AbortSignal, graceMs: number): Promise<ThreadResult> {
    if (this.gone || this.current !== null) return Promise.reject(new Error('the sandbox worker is not free'));
    return new Promise<ThreadResult>((resolve, reject) => {
      const onAbort = () => {
        // The store reaches the interrupt handler within about half a millisecond of busy code.
        Atomics.store(this.cancelledRun, 0, request.id);
        this.arm(graceMs, 'cancelled');
      };
      this.current = { request, graceMs, signal, onAbort, watchdog: undefined, resolve, reject };
      this.worker.ref();
      signal.addEventListener('abort', onAbort, { once: true });
      this.worker.postMessage(request);
      // A starting worker arms it on "ready" instead, so its startup (300+ ms under tsx) is not charged to the run.
      if (this.ready) this.arm(request.timeoutMs + graceMs, 'timeout');
    });
  }

  /** Ends the worker; a run in flight fails with `reason` (host failure, so run-code says sandbox_failed). */
  async close(reason: string): Promise<void> {
    this.leave()?.reject(new Error(reason));
    await this.worker.terminate();
  }

  private receive(message: WorkerMessage): void {
    this.modulesLoaded = message.modulesLoaded;
    if (message.type === 'ready') {
      this.ready = true;
      const run = this.current;
      if (run !== null && !run.signal.aborted) this.arm(run.request.timeoutMs + run.graceMs, 'timeout');
      return;
    }
    const run = this.current;
    if (run === null || run.request.id !== message.id) return;
    this.finish();
    if (message.type === 'done') run.resolve({ outcome: message.outcome, logs: message.logs });
    else run.reject(new Error(message.message));
  }

  /** (Re)starts the watchdog: if the worker has not answered when it fires, the worker is given up. */
  private arm(delayMs: number, kind: StopKind): void {
    const run = this.current;
    if (run === null) return;
    clearTimeout(run.watchdog);
    run.watchdog = setTimeout(() => {
      this.leave()?.resolve({ outcome: stoppedOutcome(kind), logs: [] });
      void this.worker.terminate();
    }, delayMs);
  }

  /** Clears the run in flight and returns it, keeping the worker. */
  private finish(): InFlight | null {
    const run = this.current;
    if (run === null) return null;
    clearTimeout(run.watchdog);
    run.signal.removeEventListener('abort', run.onAbort);
    this.current = null;
    if (!this.gone) this.worker.unref();
    return run;
  }

  /** Marks the worker unusable (once) and hands back the run it leaves unfinished. */
  private leave(): InFlight | null {
    const run = this.finish();
    if (!this.gone) {
      this.gone = true;
      this.onGone(this);
    }
    return run;
  }
}

interface WorkerScript {
  entry: URL | string;
  options: { eval?: boolean; execArgv?: string[] };
}

let script: WorkerScript | undefined;

/**
 * Built, the worker is `dist/steps/code/sandbox-worker.js` beside this file. From sources
 * (vitest, `npm run dev`) only the `.ts` exists, and a worker gets none of the parent's loader.
 * Node 20 also ignores loader hooks passed as `--import` in a worker's execArgv for its entry
 * and its imports (nodejs/node#47747), so a two-line entry registers tsx (a devDependency)
 * through its API first, then imports the worker. No execArgv: an inherited `--import tsx`
 * would register it twice on Nodes where it works.
 */
function workerScript(): WorkerScript {
  if (script !== undefined) return script;
  const built = new URL('./sandbox-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return (script = { entry: built, options: {} });
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const source = JSON.stringify(new URL('./sandbox-worker.ts', import.meta.url).href);
  return (script = { entry: `import(${tsx}).then(({ register }) => { register(); return import(${source}); });`, options: { eval: true, execArgv: [] } });
}
