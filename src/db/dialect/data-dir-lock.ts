import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';

export class DataDirLockedError extends Error {
  constructor(readonly file: string) {
    super(
      `another switchyard serve is running on this data directory (it holds the lock on ${file}); stop it first. ` +
        'To run several processes, use PostgreSQL (DATABASE_URL) with --role api and --role worker (docs/deploy.md). ' +
        'The admin commands (workspace, token, migrate) work beside a running server.',
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  release(): void;
}

/**
 * One `serve` per embedded database: two engines on one SQLite file would both resume the
 * executions left running. The lock is an exclusive transaction held open on a small SQLite
 * file of its own (`serve.lock`), i.e. the operating system's advisory file locks, taken through
 * better-sqlite3 because Node has no flock: the kernel drops it when the process dies, SIGKILL
 * included, so a crash never leaves a stale lock. The database file itself is not locked, so
 * the admin CLI keeps working beside the server.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'serve.lock');
  const connection = new SQLite(file, { timeout: 0 });
  try {
    connection.pragma('locking_mode = EXCLUSIVE');
    connection.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    connection.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') throw new DataDirLockedError(file);
    throw error;
  }
  return {
    release: () => {
      if (!connection.open) return;
      connection.exec('ROLLBACK');
      connection.close();
    },
  };
}
