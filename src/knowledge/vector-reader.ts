import { Worker } from 'node:worker_threads';
import { workerScript } from '../lib/worker-script.js';

export interface ReaderRequest {
  id: number;
  table: string;
  partitions: string[];
  query: Float32Array;
  k: number;
}
export type ReaderResponse = { id: number; seqs: Float64Array; distances: Float64Array } | { id: number; error: string };

interface Waiting {
  resolve(response: { seqs: Float64Array; distances: Float64Array }): void;
  reject(error: Error): void;
}

/** Threads that fail to start or die this many times are not started again. */
const MAX_FAILURES = 3;

/**
 * sqlite-vec's scans on a thread of their own, over a second, read-only connection to the
 * database file (WAL lets it read beside the serving connection, which sees the same committed
 * rows). A hybrid search then runs its two halves at once: the vector scan here while the event
 * loop runs the keyword query, instead of one after the other (SQLite calls block the thread
 * that makes them). On bench:knowledge's base of 103,000 chunks the vector half is ~5 ms and
 * the keyword half ~4 ms of a ~10 ms hybrid search.
 *
 * The thread starts with the first vector search (a server that never searches runs none) and
 * takes scans once it has opened the file; until then, and whenever it fails, `knn` answers
 * null and the caller scans on its own connection. It keeps the process alive only while it
 * has work.
 */
export class VectorReader {
  private worker: Worker | null = null;
  private ready = false;
  /** Settles when the thread last started takes scans (true) or is lost before it does (false). */
  private started: Promise<boolean> = Promise.resolve(false);
  private failures = 0;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  constructor(private readonly file: string) {}

  /** Starts the thread if it is not running and waits until it takes scans: whether it does (tests, benchmarks). */
  whenReady(): Promise<boolean> {
    this.start();
    return this.worker ? this.started : Promise.resolve(false);
  }

  /**
   * The `k` nearest rows of each partition of `table` (unsorted across partitions), or null
   * when the thread cannot take the scan (not started yet, or given up).
   */
  knn(table: string, partitions: string[], query: Float32Array, k: number): Promise<{ seq: number; distance: number }[]> | null {
    const worker = this.worker;
    if (!worker || !this.ready) {
      if (!worker) this.start();
      return null;
    }
    const id = this.nextId++;
    return new Promise<{ seqs: Float64Array; distances: Float64Array }>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) worker.ref();
      const request: ReaderRequest = { id, table, partitions, query, k };
      worker.postMessage(request);
    }).then(({ seqs, distances }) => Array.from(seqs, (seq, i) => ({ seq, distance: distances[i]! })));
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.failures = MAX_FAILURES;
    this.worker = null;
    this.ready = false;
    this.failAll(new Error('the vector reader was closed'));
    if (worker) await worker.terminate();
  }

  private start(): void {
    if (this.worker || this.failures >= MAX_FAILURES) return;
    const { entry, options } = workerScript(import.meta.url, 'vector-reader-worker');
    const worker = new Worker(entry, Object.assign({}, options, { workerData: { file: this.file } }));
    worker.unref();
    let settle: (ready: boolean) => void = () => {};
    this.started = new Promise<boolean>((resolve) => (settle = resolve));
    worker.on('message', (message: ReaderResponse | { ready: true }) => {
      if ('ready' in message) {
        if (this.worker === worker) this.ready = true;
        settle(this.ready);
        return;
      }
      const waiting = this.waiting.get(message.id);
      if (!waiting) return;
      this.waiting.delete(message.id);
      if (this.waiting.size === 0) worker.unref();
      if ('error' in message) waiting.reject(new Error(message.error));
      else waiting.resolve(message);
    });
    const lost = (error: Error) => {
      settle(false);
      if (this.worker !== worker) return;
      this.worker = null;
      this.ready = false;
      this.failures += 1;
      this.failAll(error);
    };
    // A thread that cannot open the file (or dies) costs nothing but the inline scan.
    worker.on('error', (error) => lost(error));
    worker.on('exit', (code) => lost(new Error(`the vector reader exited (code ${code})`)));
    this.worker = worker;
  }

  private failAll(error: Error): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const entry of waiting) entry.reject(error);
  }
}
