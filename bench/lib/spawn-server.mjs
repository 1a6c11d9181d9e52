// The parent side of the bench's own server scripts (servers/: the bare baselines and the
// in-process Switchyard wirings): fork one per target, so the load generator (here) and the
// server (there) never share an event loop. `switchyard serve` itself: spawn-serve.mjs.
import { fork } from 'node:child_process';
import { clearTimeout } from 'node:timers';
import { probeClient } from './probe-client.mjs';
import { collectCpuProfiles, cpuProfileFlags } from './cpu-profiles.mjs';
import { benchNodeFlags, cleanEnvironment } from './spawn-serve.mjs';

const READY_TIMEOUT_MS = 180_000;

/**
 * Starts `script` and resolves with what it announced (`port`, ...), `id`, a `stop()` (resolves
 * with `{profiles}`, throws unless the child exits 0) and, with `probe`, `probe(op)` (the script
 * installs probe.mjs), `loadSpans` (as spawn-serve.mjs's). `profileDir` set: the child runs under `node --cpu-prof`
 * (cpu-profiles.mjs), its profiles named after `id`.
 */
export function spawnServer(script, args, { id, profileDir, probe = false } = {}) {
  const profile = profileDir ? cpuProfileFlags(profileDir, id) : null;
  const execArgv = [...(profile?.flags ?? []), ...benchNodeFlags()];
  const child = fork(script, args, { execArgv, env: cleanEnvironment(), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ask = probe ? probeClient(child, `${script} (${id})`) : null;

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
      const loadSpans = [];
      let stopping = null;
      const stop = () =>
        (stopping ??= (async () => {
          if (child.connected) child.send('stop');
          const { code } = await exited;
          const profiles = profile ? collectCpuProfiles(profile.threadDir, profileDir, id, loadSpans) : [];
          if (code !== 0) throw new Error(`${script} exited with code ${code} on stop`);
          return { profiles };
        })());
      const { type: _type, ...announced } = message;
      resolve({
        ...announced,
        id,
        pid: child.pid,
        kind: 'bench-script',
        baseUrl: `http://127.0.0.1:${announced.port}`,
        probe: ask,
        loadSpans,
        stop,
      });
    });
  });
}
