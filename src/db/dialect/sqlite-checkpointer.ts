import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { workerScript } from '../../lib/worker-script.js';

/**
 * Pages the serving connection's WAL may hold before it checkpoints by itself (about 80 MB):
 * only reached if the checkpointer thread falls behind or stops. SQLite's default, 1,000 pages,
 * made one commit in about 200 pay a checkpoint inline: 5-10 ms, the whole p99 of the webhook
 * latency benchmark (46 of 9,111 commits over 5 ms, none with checkpoints moved off the thread).
 */
export const SAFETY_NET_PAGES = 20_000;
const INTERVAL_MS = 100;

export interface Checkpointer {
  stop(): Promise<void>;
}

/** Starts checkpointing `file`'s WAL every 100 ms on a worker thread (unref'd: it never keeps the process alive). */
export function startCheckpointer(file: string): Checkpointer {
  const { entry, options } = workerScript(import.meta.url, 'sqlite-checkpoint-worker');
  const worker = new Worker(entry, Object.assign({}, options, { workerData: { file, intervalMs: INTERVAL_MS } }));
  worker.unref();
  // A failing checkpointer must not bring the server down: the auto-checkpoint safety net remains.
  worker.on('error', () => {});
  let exited = false;
  worker.once('exit', () => {
    exited = true;
  });
  return {
    stop: async () => {
      if (exited) return;
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 2_000);
      await once(worker, 'exit');
      clearTimeout(timer);
    },
  };
}
