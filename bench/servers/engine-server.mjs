// The real Switchyard app from dist/ for the engine benchmarks, wired as servers/switchyard.mjs
// wires it (config from an empty environment, buildDeps, first-start bootstrap, buildApp,
// logger and the API and webhook rate limits off, embedded SQLite in a temporary data dir
// removed on stop). Also used by the webhook benchmarks (bench/webhooks.mjs).
// It adds unauthenticated routes for the parent, outside /api/v1 and only in this child:
//   GET  /bench/state           group commits, SQLite commits (and how long they took), the
//                               server's clock, TCP connections accepted so far
//   GET  /bench/idle            answers once the engine has nothing in flight (no polling)
//   GET  /bench/event-loop/start, /stop   the main thread's event-loop utilization and delay
//                               between the two calls (off otherwise: its 1 ms timer costs)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { loadConfig } from '../../dist/config.js';
import { buildDeps } from '../../dist/deps.js';
import { buildApp } from '../../dist/app.js';
import { announceReady, freePort } from '../lib/child-server.mjs';
import { countSqliteCommits } from '../lib/sqlite-commit-counter.mjs';

const sqlite = countSqliteCommits();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-engine-bench-'));
const port = await freePort();
// An empty environment: the benchmark must not pick up a DATABASE_URL from the shell.
const config = loadConfig({}, { port, host: '127.0.0.1', dataDir, databaseUrl: null, secretKey: null, apiRateLimit: 0, webhookRateLimit: 0, logLevel: 'silent' });

let backgroundErrors = 0;
const deps = await buildDeps(config, {
  onBackgroundError: (error) => {
    backgroundErrors += 1;
    if (backgroundErrors <= 5) console.error('engine-server: background error:', error);
  },
});
const first = await deps.identity.bootstrap();
if (!first) throw new Error('bootstrap did not create the first token on a fresh data dir');

/** TCP connections the HTTP server accepted: a load generator that reconnects shows here. */
let connections = 0;
const state = () => ({ commits: deps.engine.batcher.commits, sqliteCommits: sqlite.commits, commitMs: { ...sqlite.commitMs }, now: deps.clock.now(), backgroundErrors, connections });

const app = await buildApp({ ...deps, config, logger: false });
app.get('/bench/state', async () => state());
// The main thread's event loop over a window: utilization (busy share) and delay (how late a
// 1 ms timer fires, i.e. how long the turns are). Only between start and stop: the timer costs.
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
let loopSince = null;
app.get('/bench/event-loop/start', async () => {
  loopDelay.reset();
  loopDelay.enable();
  loopSince = performance.eventLoopUtilization();
  return {};
});
app.get('/bench/event-loop/stop', async () => {
  loopDelay.disable();
  if (!loopSince) return { utilization: null, delayMs: null };
  const ms = (ns) => Number((ns / 1e6).toFixed(3));
  const utilization = Number(performance.eventLoopUtilization(loopSince).utilization.toFixed(3));
  loopSince = null;
  return { utilization, delayMs: { mean: ms(loopDelay.mean), p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) } };
});
app.get('/bench/idle', async () => {
  await deps.engine.idle();
  return state();
});

app.server.on('connection', () => {
  connections += 1;
});
await app.listen({ port, host: config.host });
// What decides whether a long-lived keep-alive connection is closed by the server (Fastify's defaults).
const { keepAliveTimeout, maxRequestsPerSocket, requestTimeout, headersTimeout, timeout } = app.server;
const http = { keepAliveTimeout, maxRequestsPerSocket, requestTimeout, headersTimeout, timeout, maxConnections: app.server.maxConnections ?? null };
announceReady({ port, token: first.token, databaseFile: path.join(dataDir, 'switchyard.db'), http }, async () => {
  await app.close();
  await deps.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
