// The parent side of probe.mjs: asks a server child over its IPC channel and resolves with the
// answer. No HTTP, so asking never queues behind the load on the server's sockets.
import { clearTimeout } from 'node:timers';

const ANSWER_TIMEOUT_MS = 30_000;

/** Returns `ask(op)`: a promise of the child's answer to `op` (see probe.mjs for the operations). */
export function probeClient(child, what) {
  let nextId = 0;
  const pending = new Map();
  child.on('message', (message) => {
    if (message?.type !== 'probe-reply') return;
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    clearTimeout(waiter.timer);
    if (message.error) waiter.reject(new Error(`${what}: probe failed: ${message.error}`));
    else waiter.resolve(message.result);
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`${what} exited (code ${code}, signal ${signal}) before the probe answered`));
    }
    pending.clear();
  });
  return (op) =>
    new Promise((resolve, reject) => {
      nextId += 1;
      const id = nextId;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${what}: the probe did not answer "${op}" within ${ANSWER_TIMEOUT_MS / 1000} s`));
      }, ANSWER_TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
      child.send({ type: 'probe', id, op });
    });
}
