// Preloaded into `switchyard serve` by the benchmarks (`node --import <this file> dist/main.js
// serve`, with an IPC channel: see spawn-serve.mjs), before the product's own modules load, so
// the SQLite commit counter wraps better-sqlite3 before the database opens. What it measures
// and answers: probe.mjs. The product is not changed: no route, no hook, no config.
import { isMainThread } from 'node:worker_threads';
import { installProbe } from './probe.mjs';

// Worker threads (the code step's pool) inherit the process's --import: the probe belongs to
// the main thread only, where the server, its database and the IPC channel are.
if (isMainThread) {
  installProbe({
    // The parent went away without stopping us: shut down as an operator would, through the
    // server's own SIGTERM handler, rather than leave a server running.
    onParentGone: () => process.kill(process.pid, 'SIGTERM'),
  });
}
