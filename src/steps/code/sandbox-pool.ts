import { availableParallelism } from 'node:os';
import type { Cancellation } from '../../lib/cancellation.js';
import type { SandboxOptions, SandboxOutcome } from './sandbox.js';
import type { RunRequest } from './sandbox-protocol.js';
import { PIPELINE_DEPTH, SandboxThread, stoppedOutcome, type HandedRun } from './sandbox-thread.js';

/**
 * The code step's runs that outgrow the calling thread's slice (inline-runs.ts), or find no
 * turn there, go to a small pool of worker threads, so a busy loop in user code costs
 * one worker until its deadline and never the event loop that serves HTTP, other executions and
 * cancels. Workers start on first use and stay warm (each holds a loaded QuickJS module); runs
 * beyond the pool's size wait in FIFO order. Idle workers are unref'd: the pool never keeps the
 * process alive, so `closeSandboxPool` is for an orderly shutdown, not a requirement.
 *
 * The thread hop costs about 0.15 ms a run: medians of `return input` through runCode, 200-call
 * rounds interleaved in one process on 2 cores, were 0.45-0.59 ms in-thread and 0.61-0.73 ms
 * pooled, while the main thread's own share fell to 0.1-0.25 ms (event loop utilization).
 */

export interface PooledSandboxOptions extends Omit<SandboxOptions, 'signal'> {
  cancel: Cancellation;
  /** run-code's log limits: the worker stops collecting lines past them (see LogBatch in sandbox-worker.ts). */
  maxLogLines: number;
  maxLogBytes: number;
}

/** Runs use all their CPU, so more workers than cores only slow each other; 4 caps the memory (one WASM module each). */
const DEFAULT_SIZE = Math.max(1, Math.min(4, availableParallelism()));
/**
 * How long past its deadline (or its cancel) a run may go unanswered before its worker is
 * terminated. A responsive worker answers within a few ms of either; the grace leaves room for
 * host work that checks no deadline (describing an error, a last module load).
 */
const WATCHDOG_GRACE_MS = 1_000;

interface Waiting {
  request: RunRequest;
  options: PooledSandboxOptions;
  /** Removes its cancel listener (only while it waits here; once on a worker, the thread listens). */
  stopListening: () => void;
  resolve: (outcome: SandboxOutcome) => void;
  reject: (error: Error) => void;
}

const settings = { size: DEFAULT_SIZE, graceMs: WATCHDOG_GRACE_MS };
const threads: SandboxThread[] = [];
const queue: Waiting[] = [];
let lastRunId = 0;
let threadsStarted = 0;
/** Modules loaded by workers that are gone, so the count survives their replacement. */
let modulesLoadedByGone = 0;

/** `runInSandbox` on a worker thread: the same outcome, with the console lines handed to `onLog` at the end. */
export function runInSandboxPool(options: PooledSandboxOptions): Promise<SandboxOutcome> {
  if (options.cancel.aborted) return Promise.resolve(stoppedOutcome('cancelled'));
  const request: RunRequest = {
    id: nextRunId(),
    code: options.code,
    argumentsJson: options.argumentsJson,
    reuseKey: options.reuseKey,
    timeoutMs: options.timeoutMs,
    memoryBytes: options.memoryBytes,
    maxLogLines: options.maxLogLines,
    maxLogBytes: options.maxLogBytes,
  };
  return new Promise((resolve, reject) => {
    const waiting: Waiting = { request, options, resolve, reject, stopListening: noop };
    listenWhileQueued(waiting);
    queue.push(waiting);
    dispatch();
  });
}

/** Ids are Int32 (the cancel flag's type) and never 0 (the flag's empty value). */
function nextRunId(): number {
  lastRunId = (lastRunId % 0x7fff_ffff) + 1;
  return lastRunId;
}

/** A cancel while it waits in the queue answers at once; once on a worker, the thread forwards the cancel. */
function listenWhileQueued(waiting: Waiting): void {
  waiting.stopListening = waiting.options.cancel.onAbort(() => {
    const index = queue.indexOf(waiting);
    if (index === -1) return;
    queue.splice(index, 1);
    waiting.resolve(stoppedOutcome('cancelled'));
  });
}

function noop(): void {}

/**
 * Hands waiting runs to workers: an idle worker first, then a new one (up to the pool's size),
 * then one that can queue it behind its current run (PIPELINE_DEPTH).
 */
function dispatch(): void {
  while (queue.length > 0) {
    const thread = pickThread();
    if (thread === undefined) return;
    const waiting = queue.shift()!;
    waiting.stopListening();
    thread.hand(handed(waiting));
  }
}

function pickThread(): SandboxThread | undefined {
  let best: SandboxThread | undefined;
  for (const thread of threads) if (thread.usable && (best === undefined || thread.load < best.load)) best = thread;
  if (best !== undefined && best.load === 0) return best;
  if (threads.length < settings.size) return startThread();
  return best !== undefined && best.load < PIPELINE_DEPTH ? best : undefined;
}

/** The run as a worker holds it; its answer settles the waiting caller and makes room for the next. */
function handed(waiting: Waiting): HandedRun {
  return {
    request: waiting.request,
    graceMs: settings.graceMs,
    cancel: waiting.options.cancel,
    stopListening: noop,
    requeue: () => {
      // Its worker died or is held up by a slow run, before starting it: back to the front of
      // the queue, cancellable again there. A new id, as the worker it left skips the old one.
      waiting.request.id = nextRunId();
      listenWhileQueued(waiting);
      queue.unshift(waiting);
    },
    resolve: ({ outcome, logs }) => {
      for (const line of logs) if (waiting.options.onLog(line)) break;
      waiting.resolve(outcome);
      dispatch();
    },
    reject: (error) => {
      waiting.reject(error);
      dispatch();
    },
  };
}

function startThread(): SandboxThread {
  const thread = new SandboxThread(
    (gone, unstarted) => {
      threads.splice(threads.indexOf(gone), 1);
      modulesLoadedByGone += gone.modulesLoaded;
      for (const run of unstarted.reverse()) run.requeue();
      // A replacement starts only when a run is waiting for it, like any other worker.
      dispatch();
    },
    // Runs taken back from behind a slow one: to another worker, or they wait here for one.
    dispatch,
  );
  threads.push(thread);
  threadsStarted++;
  return thread;
}

/** Terminates every worker; runs in flight or waiting fail as host failures (`sandbox_failed`). Later runs start new workers. */
export async function closeSandboxPool(): Promise<void> {
  for (const waiting of queue.splice(0)) {
    waiting.stopListening();
    waiting.reject(new Error('the code sandbox pool was closed'));
  }
  await Promise.all([...threads].map((thread) => thread.close('the code sandbox pool was closed')));
}

/** For tests: how many WASM modules the pool's workers have loaded, those gone included. */
export function sandboxModulesLoaded(): number {
  return threads.reduce((sum, thread) => sum + thread.modulesLoaded, modulesLoadedByGone);
}

/** For tests: how many workers the pool has started, replacements included. */
export function sandboxThreadsStarted(): number {
  return threadsStarted;
}

/** For tests: terminates the busy workers from outside, as a crash would. */
export async function crashBusySandboxThreads(): Promise<void> {
  await Promise.all(threads.filter((thread) => thread.load > 0).map((thread) => thread.worker.terminate()));
}

/**
 * For tests: a pool size or watchdog grace other than the defaults (returns the settings before).
 * A grace below zero fires the watchdog before the worker's own deadline, which is how a worker
 * that stopped answering looks to the pool.
 */
export function tuneSandboxPool(changes: Partial<typeof settings>): typeof settings {
  const previous = { ...settings };
  Object.assign(settings, changes);
  return previous;
}
