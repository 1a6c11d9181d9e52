// Wakes the parent when the server commits, without asking the server anything: every SQLite
// commit in WAL mode appends to `<database>-wal`, and the kernel tells a file watcher (inotify on
// Linux). A sequential benchmark waits for its run's end this way, then reads the row from the
// file: no polling load on the server, and no timer spinning in the parent while it runs.
import fs from 'node:fs';
import { clearTimeout } from 'node:timers';

/**
 * `changed(ms)`: a promise that resolves at the next write to the WAL, or after `ms` at the
 * latest (a missed notification, or a checkpoint that replaced the file, costs a wait, never a
 * wrong answer). Take it BEFORE reading the database, so a commit in between is not missed.
 */
export function watchWal(databaseFile) {
  const waiters = new Set();
  const watcher = fs.watch(`${databaseFile}-wal`, { persistent: false }, () => {
    for (const wake of [...waiters]) wake();
  });
  return {
    changed: (ms) =>
      new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        waiters.add(wake);
      }),
    close: () => watcher.close(),
  };
}
