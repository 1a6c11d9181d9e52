/**
 * The longest path parameter the router matches, in bytes of the path as sent (percent-encoded).
 * A store row key (a later issue) may be 512 characters; percent-encoded UTF-8 takes up to 12
 * bytes a character (a 4-byte character is `%F0%9F%98%80`), so 512 * 12 = 6,144 bytes must pass.
 * find-my-way's default, 100, would refuse a key of nine emoji. Longer is 414 `uri_too_long`.
 */
export const MAX_PARAM_LENGTH = 8192;

/**
 * Node's own limits on the request head and on slow clients, chosen here rather than left to the
 * framework's defaults (Fastify turns Node's request timeout off):
 * - `maxHeaderBytes`: the request line and every header together; past it, 431. Node counts the
 *   request line in it, so a URL long enough to overflow it is 431 too: Node has no URL limit of
 *   its own, and none is added (only a path parameter has one, above).
 * - `headersTimeoutMs`: the whole head must arrive within it (Node's default, 60 s); else 408.
 * - `requestTimeoutMs`: the whole request, body included, must arrive within it (Node's default,
 *   300 s, which a 16 MiB webhook body at 512 kbit/s still meets); else 408. It ends when the
 *   request has been received: a synchronous webhook waiting for its run is not cut short.
 * - `checkIntervalMs`: how often Node looks for connections past those deadlines (its default).
 */
export interface HttpLimits {
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  checkIntervalMs: number;
}

export const HTTP_LIMITS: HttpLimits = {
  maxHeaderBytes: 16_384,
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 300_000,
  checkIntervalMs: 30_000,
};
