// The child side of a benchmark server: tell the parent where it listens, stop when told.
import net from 'node:net';

/** A port free on 127.0.0.1 right now (for apps that must know their base URL before listening). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Sends `{type: 'ready', ...info}` to the parent. On `stop` (or when the parent goes away) it
 * runs `close` and exits normally, so `node --cpu-prof` gets to write its profile.
 */
export function announceReady(info, close) {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await close();
    process.exit(0);
  };
  process.on('message', (message) => {
    if (message === 'stop') void stop();
  });
  process.on('disconnect', () => void stop());
  process.send({ type: 'ready', ...info });
}
