import SQLite from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * Checkpoints an SQLite WAL from a thread of its own (started by sqlite-checkpointer.ts): a
 * PASSIVE checkpoint copies committed pages into the database file without blocking writers,
 * so the serving connection never pays for it inside a commit.
 */
const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const connection = new SQLite(file);
connection.pragma('busy_timeout = 1000');
const checkpoint = () => {
  try {
    connection.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // A busy database or a closing file: the next tick tries again, and the serving connection's
    // own (rare) auto-checkpoint remains the safety net.
  }
};
const timer = setInterval(checkpoint, intervalMs);
parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  connection.close();
  parentPort?.close();
});
