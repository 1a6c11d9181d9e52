// The benchmark's view into a server process, with no route or code added to the product: it
// runs inside the server (as a `node --import` preload of `switchyard serve`, see
// serve-probe.mjs, or imported by the in-process servers) and answers its parent over the fork
// IPC channel. Nothing here runs per request except the SQLite commit counter (one wrapper call
// per statement) and one counter increment per accepted TCP connection.
//   state        SQLite commits (and how long they took), the server's clock, TCP connections
//                accepted so far, plus whatever the host adds (`extra`)
//   loop-start   starts an event-loop window: utilization and the delay of a 1 ms timer
//   loop-stop    ends it and answers the window's figures (the timer is off between windows:
//                it costs)
//   http         the listening HTTP server's connection settings (keep-alive, timeouts)
import dc from 'node:diagnostics_channel';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { systemClock } from '../../dist/lib/clock.js';
import { countSqliteCommits } from './sqlite-commit-counter.mjs';

/** Held here so the channel (and its subscriber) lives as long as the process. */
const acceptedSockets = dc.channel('net.server.socket');

function eventLoopWindows() {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  let since = null;
  const ms = (ns) => Number((ns / 1e6).toFixed(3));
  return {
    start() {
      delay.reset();
      delay.enable();
      since = performance.eventLoopUtilization();
      return {};
    },
    stop() {
      delay.disable();
      if (!since) return { utilization: null, delayMs: null };
      const utilization = Number(performance.eventLoopUtilization(since).utilization.toFixed(3));
      since = null;
      return {
        utilization,
        delayMs: { mean: ms(delay.mean), p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      };
    },
  };
}

/**
 * Installs the probe (once per process) before the server opens its database. `extra()` adds
 * fields to `state` (the in-process servers add the engine's group-commit counter);
 * `onParentGone` runs when the IPC channel closes (the parent died without stopping us).
 */
export function installProbe({ extra = () => ({}), onParentGone } = {}) {
  if (typeof process.send !== 'function')
    throw new Error('the benchmark probe needs an IPC channel to its parent (fork, or an "ipc" stdio slot)');
  const sqlite = countSqliteCommits();
  let connections = 0;
  /** The HTTP server behind the first accepted connection: the one the benchmarks load. */
  let httpServer = null;
  acceptedSockets.subscribe(({ socket }) => {
    connections += 1;
    httpServer ??= socket.server ?? null;
  });
  const loop = eventLoopWindows();
  const ops = {
    state: () =>
      Object.assign({ sqliteCommits: sqlite.commits, commitMs: { ...sqlite.commitMs }, now: systemClock.now(), connections }, extra()),
    'loop-start': () => loop.start(),
    'loop-stop': () => loop.stop(),
    http: () => {
      if (!httpServer) return null;
      const { keepAliveTimeout, maxRequestsPerSocket, requestTimeout, headersTimeout, timeout } = httpServer;
      return {
        keepAliveTimeout,
        maxRequestsPerSocket,
        requestTimeout,
        headersTimeout,
        timeout,
        maxConnections: httpServer.maxConnections ?? null,
      };
    },
  };
  process.on('message', (message) => {
    if (message?.type !== 'probe') return;
    const op = ops[message.op];
    try {
      if (!op) throw new Error(`unknown probe operation "${message.op}"`);
      process.send({ type: 'probe-reply', id: message.id, result: op() });
    } catch (error) {
      process.send({ type: 'probe-reply', id: message.id, error: String(error?.stack ?? error) });
    }
  });
  // A 'message' listener holds the process open; the server's own handles decide when it ends
  // (a serve that fails to start must still exit with its code).
  process.channel?.unref();
  if (onParentGone) process.once('disconnect', onParentGone);
}
