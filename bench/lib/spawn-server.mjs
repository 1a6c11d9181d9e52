// The parent side: fork one server script per target, so autocannon (here) and the server
// (there) never share an event loop.
import { fork } from 'node:child_process';
import { clearTimeout } from 'node:timers';
import path from 'node:path';

const READY_TIMEOUT_MS = 180_000;

/**
 * Starts `script` and resolves with what it announced (`port`, ...) and a `stop()`.
 * `profileDir` set: the child runs under `node --cpu-prof` and writes `<name>.cpuprofile` there.
 * With `perThread`, Node's own names are kept instead (`CPU.<date>.<time>.<pid>.<thread>.<seq>`):
 * every worker thread writes a profile too, and one fixed name would have them overwrite the
 * main thread's.
 */
export function spawnServer(script, args, { name, profileDir, perThread = false } = {}) {
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`, ...(perThread ? [] : [`--cpu-prof-name=${name}.cpuprofile`])] : [];
  // BENCH_NODE_FLAGS: extra V8/Node flags for the server children (e.g. --trace-gc), which NODE_OPTIONS refuses.
  const execArgv = [...profile, ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
  const child = fork(script, args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${script} did not report ready within ${READY_TIMEOUT_MS / 1000} s`));
    }, READY_TIMEOUT_MS);
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited before it was ready (code ${code}, signal ${signal})`));
    });
    child.on('message', (message) => {
      if (message?.type !== 'ready') return;
      clearTimeout(timer);
      const stop = async () => {
        child.send('stop');
        const { code } = await exited;
        if (code !== 0) throw new Error(`${script} exited with code ${code} on stop`);
      };
      resolve({ ...message, stop });
    });
  });
}
