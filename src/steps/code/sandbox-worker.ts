import { parentPort, workerData } from 'node:worker_threads';
import { runInSandbox } from './sandbox.js';
import type { RunRequest, SandboxWorkerData, WorkerMessage } from './sandbox-protocol.js';
import { currentSlot, sandboxModulesLoaded } from './wasm-module.js';

/**
 * Entry of a sandbox worker thread (started by sandbox-pool.ts): runs one request at a time with
 * `runInSandbox`, so the WASM module, its memory budget and its replacement all live here, and a
 * busy loop blocks this thread instead of the process's event loop.
 */

if (parentPort === null) throw new Error('sandbox-worker.ts runs only as a worker thread (see sandbox-pool.ts)');
const port = parentPort;
const cancelledRun = new Int32Array((workerData as SandboxWorkerData).cancelledRun);

port.on('message', (request: RunRequest) => void run(request));

// Loading the module now takes its 10-20 ms off the first run; "ready" starts the pool's watchdog.
const announceReady = () => port.postMessage({ type: 'ready', modulesLoaded: sandboxModulesLoaded() } satisfies WorkerMessage);
currentSlot().module.then(announceReady, announceReady);

async function run(request: RunRequest): Promise<void> {
  const logs = new LogBatch(request.maxLogLines, request.maxLogBytes);
  let reply: WorkerMessage;
  try {
    const outcome = await runInSandbox({
      code: request.code,
      argumentsJson: request.argumentsJson,
      timeoutMs: request.timeoutMs,
      memoryBytes: request.memoryBytes,
      // Read by the interrupt handler about twice a millisecond of busy code; an atomic load is a few ns.
      signal: {
        get aborted() {
          return Atomics.load(cancelledRun, 0) === request.id;
        },
      },
      onLog: (line) => logs.add(line),
    });
    reply = { type: 'done', id: request.id, outcome, logs: logs.lines, modulesLoaded: sandboxModulesLoaded() };
  } catch (error) {
    reply = { type: 'failed', id: request.id, message: error instanceof Error ? error.message : String(error), modulesLoaded: sandboxModulesLoaded() };
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
