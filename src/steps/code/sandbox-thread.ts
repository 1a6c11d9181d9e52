import { Worker } from 'node:worker_threads';
import type { Cancellation } from '../../lib/cancellation.js';
import { workerScript } from '../../lib/worker-script.js';
import type { SandboxOutcome } from './sandbox.js';
import { CANCEL_SLOTS, type RunRequest, type SandboxWorkerData, type WorkerMessage } from './sandbox-protocol.js';

/** A finished run as the main thread sees it; lines go to run-code's LogCapture afterwards. */
export interface ThreadResult {
  outcome: SandboxOutcome;
  logs: string[];
}

type StopKind = 'timeout' | 'cancelled';

/** A run handed to this worker: executing (the first) or queued behind it in the worker. */
export interface HandedRun {
  request: RunRequest;
  /** Gives the run back to the front of the pool's queue (its worker died, or its run is slow, before it started). */
  requeue: () => void;
  graceMs: number;
  cancel: Cancellation;
  /** Removes the run's cancel listener (set by whoever holds the run: the pool's queue, then the thread). */
  stopListening: () => void;
  resolve: (result: ThreadResult) => void;
  reject: (error: Error) => void;
}

/** An outcome the main thread decides on its own, when the worker did not (or could not) answer. */
export const stoppedOutcome = (kind: StopKind): SandboxOutcome => ({ interrupts: 0, reused: false, ok: false, failure: { kind } });

/**
 * How many runs a worker holds at once: the one it executes and the ones queued behind it in
 * the worker. A worker gets a run only when the main thread hands it one, so a main thread busy
 * for a few ms (parsing a burst of requests, a scavenge, a group commit) left workers with one
 * run in hand idle: with warm contexts a short run takes ~0.1 ms. Webhook benchmark, respond
 * step at 200 connections: 2,460-2,910 answers/s with 2 runs in hand, 3,150-3,330 with 4,
 * 3,670-3,700 with 8; at 32 connections 2,910-3,450, 3,420-3,920, 3,560-4,270.
 */
export const PIPELINE_DEPTH = 8;
/**
 * A run executing this long (ms) holds up the runs queued behind it in its worker: they are
 * taken back and go to another worker (or wait in the pool's queue), and this worker gets no
 * more until the slow run ends.
 */
export const RETAKE_AFTER_MS = 10;

/**
 * One worker thread of the pool and the runs handed to it, oldest (executing) first. The
 * worker stops its own run at the deadline or when the shared cancel slots name it; the
 * watchdog here is for a worker that stopped answering (stuck in one long host call), which is
 * then terminated and reported gone, handing back the runs it had not started.
 */
export class SandboxThread {
  readonly worker: Worker;
  /** WASM modules the worker has loaded, as last reported. */
  modulesLoaded = 0;
  private readonly cancelled = new Int32Array(new SharedArrayBuffer(4 * CANCEL_SLOTS));
  private nextCancelSlot = 0;
  private ready = false;
  private gone = false;
  private readonly runs: HandedRun[] = [];
  private watchdog: NodeJS.Timeout | undefined;
  private exitError: Error | undefined;
  /** When the executing run started, as the main thread saw it (handed to an idle worker, or the one before answered). */
  private headStartedAt = 0;
  /** Checks for a slow head run while runs wait behind it (one timer per thread, not per run). */
  private retakeTimer: NodeJS.Timeout | undefined;
  /** The executing run has held up others for RETAKE_AFTER_MS: the pool hands this worker nothing until it ends. */
  private slow = false;

  /**
   * `onGone` is called once, when the worker is no longer usable (crashed, terminated, closed),
   * with the runs it had queued but not started: the pool gives them to another worker.
   * `onRetaken` is called when runs waiting behind a slow one went back to the pool's queue.
   */
  constructor(
    private readonly onGone: (thread: SandboxThread, unstarted: HandedRun[]) => void,
    private readonly onRetaken: () => void,
  ) {
    const { entry, options } = workerScript(import.meta.url, 'sandbox-worker');
    this.worker = new Worker(
      entry,
      Object.assign({}, options, { workerData: { cancelled: this.cancelled.buffer } satisfies SandboxWorkerData }),
    );
    // Held only while runs are in flight (see hand): an idle pool must never keep the process alive.
    this.worker.unref();
    this.worker.on('message', (message: WorkerMessage) => this.receive(message));
    // Comes just before 'exit' when the worker throws: its message says more than the exit code.
    this.worker.on('error', (error) => {
      this.exitError ??= error;
    });
    this.worker.on('exit', (code) => {
      const head = this.runs[0];
      this.leave();
      head?.reject(new Error(this.exitError?.message ?? `its worker thread exited with code ${code}`));
    });
  }

  /** Runs handed to it and not answered yet. */
  get load(): number {
    return this.runs.length;
  }

  get usable(): boolean {
    return !this.gone && !this.slow;
  }

  /** Hands a run to the worker; it executes after the ones already handed. */
  hand(run: HandedRun): void {
    if (this.gone || this.runs.length >= PIPELINE_DEPTH) {
      run.reject(new Error('the sandbox worker is not free'));
      return;
    }
    run.stopListening = run.cancel.onAbort(() => this.cancel(run));
    this.runs.push(run);
    if (this.runs.length === 1) {
      this.worker.ref();
      this.headStartedAt = performance.now();
      // A starting worker arms it on "ready" instead, so its startup (300+ ms under tsx) is not charged to the run.
      if (this.ready) this.arm(run.request.timeoutMs + run.graceMs, 'timeout');
    } else {
      this.watchForSlowHead();
    }
    this.worker.postMessage(run.request);
  }

  /** Ends the worker; runs in flight fail with `reason` (host failure, so run-code says sandbox_failed). */
  async close(reason: string): Promise<void> {
    const runs = [...this.runs];
    this.leave(false);
    for (const run of runs) run.reject(new Error(reason));
    await this.worker.terminate();
  }

  private cancel(run: HandedRun): void {
    // The executing run sees the slot from its interrupt handler within about half a
    // millisecond of busy code; a queued one is skipped by the worker when its turn comes, and
    // its caller is answered now (the worker's later answer for it matches no run and is dropped).
    this.skipInWorker(run);
    const index = this.runs.indexOf(run);
    if (index === 0) {
      this.arm(run.graceMs, 'cancelled');
    } else if (index > 0) {
      this.runs.splice(index, 1);
      run.resolve({ outcome: stoppedOutcome('cancelled'), logs: [] });
    }
  }

  private receive(message: WorkerMessage): void {
    this.modulesLoaded = message.modulesLoaded;
    if (message.type === 'ready') {
      this.ready = true;
      // The head starts now: the worker's startup is not its time.
      this.headStartedAt = performance.now();
      if (this.runs.length > 1) this.watchForSlowHead();
      const head = this.runs[0];
      if (head !== undefined && !head.cancel.aborted) this.arm(head.request.timeoutMs + head.graceMs, 'timeout');
      return;
    }
    const head = this.runs[0];
    if (head === undefined || head.request.id !== message.id) return;
    this.finishHead();
    if (message.type === 'done') head.resolve({ outcome: message.outcome, logs: message.logs });
    else head.reject(new Error(message.message));
  }

  /** Names a run in the shared cancel slots: the worker stops it, or skips it when its turn comes. */
  private skipInWorker(run: HandedRun): void {
    Atomics.store(this.cancelled, this.nextCancelSlot, run.request.id);
    this.nextCancelSlot = (this.nextCancelSlot + 1) % CANCEL_SLOTS;
  }

  /**
   * Runs wait behind the executing one: make sure a check comes RETAKE_AFTER_MS after it
   * started. Under load the head changes every ~0.1 ms, so the timer is not re-armed per run:
   * when it fires for a head that has since answered, it re-arms for the current one.
   */
  private watchForSlowHead(): void {
    if (this.retakeTimer !== undefined || this.gone || !this.ready) return;
    const due = Math.max(1, Math.ceil(this.headStartedAt + RETAKE_AFTER_MS - performance.now()));
    this.retakeTimer = setTimeout(() => {
      this.retakeTimer = undefined;
      // A starting worker is checked again once it is ready (see receive).
      if (this.runs.length < 2 || this.gone || !this.ready) return;
      if (performance.now() - this.headStartedAt < RETAKE_AFTER_MS) return this.watchForSlowHead();
      this.slow = true;
      // The worker skips them when their turn comes; its answers for them then match no run
      // (requeued runs get new ids). The head may have ended meanwhile, its answer still on the
      // way: then the worker stops the first of them mid-run, which frees it like any stopped
      // run (sandbox.ts) and costs only that run's work and its warm context.
      const waiting = this.runs.splice(1);
      for (const run of waiting) {
        this.skipInWorker(run);
        run.stopListening();
      }
      // Back to the front of the pool's queue, in their order.
      for (const run of waiting.reverse()) run.requeue();
      this.onRetaken();
    }, due);
    // The watchdog holds the process while a run is in flight; this check never needs to.
    this.retakeTimer.unref();
  }

  /** (Re)starts the watchdog for the executing run: if the worker has not answered when it fires, the worker is given up. */
  private arm(delayMs: number, kind: StopKind): void {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      const head = this.runs[0];
      this.leave();
      head?.resolve({ outcome: stoppedOutcome(kind), logs: [] });
      void this.worker.terminate();
    }, delayMs);
  }

  /** The executing run answered: the next one (already in the worker) starts now. */
  private finishHead(): void {
    clearTimeout(this.watchdog);
    const head = this.runs.shift()!;
    head.stopListening();
    this.slow = false;
    this.headStartedAt = performance.now();
    const next = this.runs[0];
    if (next === undefined) {
      if (!this.gone) this.worker.unref();
      return;
    }
    if (next.cancel.aborted) this.arm(next.graceMs, 'cancelled');
    else this.arm(next.request.timeoutMs + next.graceMs, 'timeout');
  }

  /**
   * Marks the worker unusable (once), leaving the executing run to the caller and handing the
   * runs it had not started back to the pool (`handBack` false: the caller fails them).
   */
  private leave(handBack = true): void {
    clearTimeout(this.watchdog);
    clearTimeout(this.retakeTimer);
    if (this.gone) return;
    this.gone = true;
    const [head, ...unstarted] = this.runs.splice(0);
    for (const run of [head, ...unstarted]) if (run) run.stopListening();
    this.onGone(this, handBack ? unstarted : []);
  }
}
