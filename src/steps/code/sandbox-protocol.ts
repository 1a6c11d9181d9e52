import type { SandboxOutcome } from './sandbox.js';

/**
 * What crosses between the pool (main thread) and a sandbox worker. Only strings, numbers and
 * the plain-JSON `SandboxOutcome` are posted; cancellation cannot be a message, because a worker
 * busy in QuickJS reads no messages until the run ends, so it is a shared flag instead.
 */

/** One run. The log limits let the worker stop collecting once run-code would drop the rest. */
export interface RunRequest {
  id: number;
  code: string;
  argumentsJson: string;
  /** See SandboxOptions.reuseKey (sandbox.ts). */
  reuseKey: string | null;
  timeoutMs: number;
  memoryBytes: number;
  maxLogLines: number;
  maxLogBytes: number;
}

/** `modulesLoaded` is the worker's running count of WASM modules, summed by the pool for tests. */
export type WorkerMessage =
  | { type: 'ready'; modulesLoaded: number }
  | { type: 'done'; id: number; outcome: SandboxOutcome; logs: string[]; modulesLoaded: number }
  | { type: 'failed'; id: number; message: string; modulesLoaded: number };

/** Cancel slots per worker: twice the runs it holds at once (see PIPELINE_DEPTH), as runs taken back also take one. */
export const CANCEL_SLOTS = 16;

export interface SandboxWorkerData {
  /**
   * CANCEL_SLOTS Int32s holding the ids of runs the pool wants stopped, written round-robin: a
   * run checks whether any slot names it (its interrupt handler, and the worker before it starts
   * a queued run), so a late store can never stop another run.
   */
  cancelled: SharedArrayBuffer;
}
