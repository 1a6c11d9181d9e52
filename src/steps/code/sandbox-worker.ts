import { parentPort, workerData } from 'node:worker_threads';
import { prepareSpare, runInSandbox } from './sandbox.js';
import { CANCEL_SLOTS, type RunRequest, type SandboxWorkerData, type WorkerMessage } from './sandbox-protocol.js';
import { currentSlot, sandboxModulesLoaded } from './wasm-module.js';

/**
 * Entry of a sandbox worker thread (started by sandbox-pool.ts): runs one request at a time with
 * `runInSandbox`, so the WASM module, its memory budget, its replacement and the warm contexts
 * (warm-contexts.ts) all live here, and a busy loop blocks this thread instead of the process's
 * event loop.
 */

if (parentPort === null) throw new Error('sandbox-worker.ts runs only as a worker thread (see sandbox-pool.ts)');
const port = parentPort;
const cancelled = new Int32Array((workerData as SandboxWorkerData).cancelled);

/** Whether the pool asked for this run to stop (an atomic load per slot: a few ns each). */
function isCancelled(id: number): boolean {
  for (let slot = 0; slot < CANCEL_SLOTS; slot++) if (Atomics.load(cancelled, slot) === id) return true;
  return false;
}

// Runs execute one at a time, in the order handed; the pool hands the next before this one ends
// (sandbox-thread.ts PIPELINE_DEPTH), so the worker never waits for the main thread between runs.
const queue: RunRequest[] = [];
let running = false;
port.on('message', (request: RunRequest) => {
  queue.push(request);
  if (!running) void drain();
});

async function drain(): Promise<void> {
  running = true;
  while (queue.length > 0) await run(queue.shift()!);
  running = false;
  // Idle: make the next run's context now (its reply has gone out already).
  setImmediate(() => {
    if (!running) void prepareSpare().catch(() => {});
  });
}

// Loading the module now takes its 10-20 ms off the first run; "ready" starts the pool's watchdog.
const announceReady = () => port.postMessage({ type: 'ready', modulesLoaded: sandboxModulesLoaded() } satisfies WorkerMessage);
currentSlot().module.then(announceReady, announceReady);

async function run(request: RunRequest): Promise<void> {
  const logs = new LogBatch(request.maxLogLines, request.maxLogBytes);
  let reply: WorkerMessage;
  if (isCancelled(request.id)) {
    port.postMessage({
      type: 'done',
      id: request.id,
      outcome: { interrupts: 0, reused: false, ok: false, failure: { kind: 'cancelled' } },
      logs: [],
      modulesLoaded: sandboxModulesLoaded(),
    } satisfies WorkerMessage);
    return;
  }
  try {
    const outcome = await runInSandbox({
      code: request.code,
      argumentsJson: request.argumentsJson,
      reuseKey: request.reuseKey,
      timeoutMs: request.timeoutMs,
      memoryBytes: request.memoryBytes,
      // Read by the interrupt handler about twice a millisecond of busy code; an atomic load is a few ns.
      signal: {
        get aborted() {
          return isCancelled(request.id);
        },
      },
      onLog: (line) => logs.add(line),
    });
    reply = { type: 'done', id: request.id, outcome, logs: logs.lines, modulesLoaded: sandboxModulesLoaded() };
  } catch (error) {
    reply = {
      type: 'failed',
      id: request.id,
      message: error instanceof Error ? error.message : String(error),
      modulesLoaded: sandboxModulesLoaded(),
    };
  }
  port.postMessage(reply);
}

/**
 * Console lines for the reply. It keeps one line past either limit, so run-code's LogCapture
 * (which applies the limits and adds the truncation marker) sees exactly what it would have
 * seen in-thread, and then it tells the sandbox to stop formatting lines.
 */
class LogBatch {
  readonly lines: string[] = [];
  private bytes = 0;

  constructor(
    private readonly maxLines: number,
    private readonly maxBytes: number,
  ) {}

  add(line: string): boolean {
    this.lines.push(line);
    this.bytes += Buffer.byteLength(line);
    return this.lines.length > this.maxLines || this.bytes > this.maxBytes;
  }
}
