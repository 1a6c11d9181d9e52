// Starts the real `node dist/main.js serve` as a child process on a free port and a fresh data
// dir, at its defaults but for what `env` sets; reads the build token the first start prints.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './child-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Resolves with `{origin, token, dataDir, pid, output(), stop()}` once the server listens. */
export async function startServe(env = {}, { readyTimeoutMs = 60_000 } = {}) {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-bench-'));
  // BENCH_SERVE_FLAGS: extra node flags for the server child (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`).
  const flags = (process.env.BENCH_SERVE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...flags, path.join(root, 'dist/main.js'), 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', SWITCHYARD_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  let errors = '';
  child.stdout.on('data', (chunk) => (text += chunk));
  child.stderr.on('data', (chunk) => (errors += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const started = Date.now();
  while (!/listening on/.test(text)) {
    if (Date.now() - started > readyTimeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`switchyard serve did not start:\n${text}\n${errors}`);
    }
    const done = await Promise.race([exited.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 50))]);
    if (done) throw new Error(`switchyard serve exited before listening:\n${text}\n${errors}`);
  }
  const token = /^\s+(sy_[A-Za-z0-9]+)\s*$/m.exec(text)?.[1];
  if (!token) throw new Error(`no first-start token in the output:\n${text}`);
  return {
    origin: `http://127.0.0.1:${port}`,
    token,
    dataDir,
    pid: child.pid,
    output: () => text + errors,
    stop: async () => {
      child.kill('SIGTERM');
      const { code } = await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (code !== 0) throw new Error(`switchyard serve exited with code ${code}:\n${errors.slice(-2000)}`);
    },
  };
}
