// The product as a user runs it: `node [flags] dist/main.js serve` in a child process, with the
// defaults a user gets (log level `info`, stdout and stderr to a file), on a fresh data dir and
// a free port, stopped with SIGTERM. See bench/README.md.
import { fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { freePort } from './child-server.mjs';
import { probeClient } from './probe-client.mjs';
import { logStats, tail, waitForListening } from './serve-log.mjs';
import { collectCpuProfiles, cpuProfileFlags } from './cpu-profiles.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const DIST_MAIN = path.resolve(here, '..', '..', 'dist', 'main.js');
const SEED = path.join(here, 'seed-data-dir.mjs');
const PROBE = pathToFileURL(path.join(here, 'serve-probe.mjs')).href;
const READY_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 60_000;
export const SERVE_LOG = 'serve.log';

/**
 * What the shell may set that would configure the server or its database: Switchyard's own
 * variables, PORT/HOST, DATABASE_URL and libpq's PG*, and NODE_OPTIONS (flags for the measured
 * process go through BENCH_NODE_FLAGS, in the open). Everything else (PATH, locale, ...) passes.
 */
const CONFIGURING = /^(SWITCHYARD_.*|SY_.*|DATABASE_URL|PORT|HOST|PG[A-Z]+|NODE_OPTIONS)$/;

export function cleanEnvironment(env = process.env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !CONFIGURING.test(name)));
}

/** BENCH_NODE_FLAGS: extra Node/V8 flags for every server child (NODE_OPTIONS refuses most V8 flags). */
export function benchNodeFlags() {
  return (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
}

// Children still running when the parent exits (an uncaught error between start and stop) get
// SIGTERM, so no server outlives the benchmark.
const live = new Set();
process.once('exit', () => {
  for (const child of live) child.kill('SIGTERM');
});

function track(child) {
  live.add(child);
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
}

/** Seeds `dataDir` in a short child process (seed-data-dir.mjs); resolves with `{token, seeded}`. */
async function seedDataDir(dataDir, workflows, script = SEED, args = []) {
  const child = fork(script, [dataDir, String(workflows), ...args], {
    env: cleanEnvironment(),
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = track(child);
  let answer = null;
  child.on('message', (message) => {
    if (message?.type === 'seeded') answer = message;
  });
  const { code, signal } = await exited;
  if (code !== 0 || !answer) throw new Error(`seeding ${dataDir} failed (code ${code}, signal ${signal})`);
  return { token: answer.token, seeded: answer.seeded };
}

/**
 * Starts `switchyard serve` and resolves once it printed its "listening on" line:
 * `{id, port, baseUrl, token, databaseFile, logFile, seeded, env, command, probe, loadSpans, stop}`.
 * A suite pushes `[from, to]` (lib/hrtime.mjs) onto `loadSpans` for every load it measures.
 * - `env`: the only variables set beyond the clean environment, SWITCHYARD_DATA_DIR, PORT and
 *   HOST (e.g. `{SWITCHYARD_API_RATE_LIMIT: '0'}`).
 * - `seed`: a number of workflows to insert before the server starts (then the token is the one
 *   the seed minted; serve prints none on a data dir with users). `seedScript` (default
 *   seed-data-dir.mjs) and `seedArgs` replace the seeding child (schedules/seed-schedules.mjs).
 * - `probe`: preload serve-probe.mjs and open an IPC channel; `probe(op)` then asks it.
 * - `profileDir`: run under `--cpu-prof` (cpu-profiles.mjs).
 * `stop()` sends SIGTERM, waits for the exit, requires code 0, reads the log's figures, collects
 * the profiles, removes the data dir, and resolves with `{shutdownMs, log, profiles}`.
 */
export async function spawnServe({ id, env = {}, seed = null, seedScript = SEED, seedArgs = [], probe = false, profileDir } = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `switchyard-serve-${id}-`));
  let seeded;
  let port;
  try {
    seeded = seed === null ? null : await seedDataDir(dataDir, seed, seedScript, seedArgs);
    port = await freePort();
  } catch (error) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const profile = profileDir ? cpuProfileFlags(profileDir, id) : null;
  const execArgv = [...(profile?.flags ?? []), ...benchNodeFlags(), ...(probe ? ['--import', PROBE] : [])];
  const logFile = path.join(dataDir, SERVE_LOG);
  const fd = fs.openSync(logFile, 'a');
  const childEnv = { ...cleanEnvironment(), SWITCHYARD_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', ...env };
  const child = spawn(process.execPath, [...execArgv, DIST_MAIN, 'serve'], {
    env: childEnv,
    stdio: ['ignore', fd, fd, ...(probe ? ['ipc'] : [])],
  });
  fs.closeSync(fd);
  const exited = track(child);
  const what = `switchyard serve (${id})`;
  const ask = probe ? probeClient(child, what) : null;

  let started;
  try {
    started = await waitForListening(logFile, exited, READY_TIMEOUT_MS);
    if (!seeded && !started.token) throw new Error('printed no first-start token on a fresh data dir');
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`${what} ${error.message}`);
  }

  /** `[from, to]` (lib/hrtime.mjs) of the loads the suite measured: what the profile summaries cover. */
  const loadSpans = [];
  let stopping = null;
  const stop = () =>
    (stopping ??= (async () => {
      const signalled = performance.now();
      child.kill('SIGTERM');
      const end = await Promise.race([exited, sleep(STOP_TIMEOUT_MS).then(() => null)]);
      const shutdownMs = Math.round(performance.now() - signalled);
      if (!end) {
        child.kill('SIGKILL');
        await exited;
      }
      const log = await logStats(logFile);
      if (log.afterStart > 0)
        console.warn(
          `NOTE: ${what} wrote ${log.afterStart} plain lines to stdout/stderr after it started, e.g.\n${log.afterStartSamples.join('\n')}`,
        );
      const logTail = end?.code === 0 ? '' : tail(logFile);
      const profiles = profile ? collectCpuProfiles(profile.threadDir, profileDir, id, loadSpans) : [];
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (!end) throw new Error(`${what} did not exit within ${STOP_TIMEOUT_MS / 1000} s of SIGTERM (killed); its log ends:\n${logTail}`);
      if (end.code !== 0)
        throw new Error(`${what} ended with code ${end.code} (signal ${end.signal}) on SIGTERM, not 0; its log ends:\n${logTail}`);
      return { shutdownMs, log, profiles };
    })());

  return {
    id,
    kind: 'serve',
    pid: child.pid,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    token: seeded?.token ?? started.token,
    databaseFile: path.join(dataDir, 'switchyard.db'),
    logFile,
    seeded: seeded?.seeded ?? null,
    env: { ...env },
    command: `node ${[...execArgv.map((flag) => (flag === PROBE ? 'bench/lib/serve-probe.mjs' : flag)), 'dist/main.js', 'serve'].join(' ')}`,
    probe: ask,
    loadSpans,
    stop,
  };
}

/**
 * Stops every server (serve children and spawn-server.mjs children alike), even when one fails,
 * then throws the first failure. Resolves with each one's stop result by id.
 */
export async function stopAll(servers) {
  const results = {};
  const failures = [];
  for (const server of servers) {
    try {
      results[server.id] = await server.stop();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0)
    throw failures.length === 1 ? failures[0] : new AggregateError(failures, failures.map((error) => error.message).join('\n'));
  return results;
}
