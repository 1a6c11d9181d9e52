import type { Socket } from 'node:net';

/**
 * How long a connection that is being closed keeps reading (and dropping) what the client still
 * sends: a client busy writing an over-limit body would otherwise have its socket closed under
 * it and see a reset (EPIPE) instead of the answer. nginx's lingering close does the same (30 s
 * there; 2 s is enough on a network that delivered the answer).
 */
const LINGER_MS = 2_000;

const lingering = new WeakSet<Socket>();

/**
 * Fastify answers a body it refuses (413, a parse error) with `Connection: close` and does not
 * read the rest; Node then calls `socket.destroySoon()` after the answer, which would drop the
 * unread bytes and reset the connection. This makes that close a lingering one: end our side,
 * keep reading and dropping until the client closes its side, destroy after LINGER_MS at most.
 */
export function lingerOnClose(socket: Socket | null | undefined): void {
  if (!socket || socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  (socket as Socket & { destroySoon: () => void }).destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.resume();
  };
}
