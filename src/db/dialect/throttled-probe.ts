/**
 * How stale this process may be about other processes' commits (the CLI revoking a token, say).
 * `PRAGMA data_version` opens a read transaction: two fcntl locks and an fstat on the WAL index,
 * ~14 us of CPU a call on the 2-core VM of bench/results, where a whole cached `GET /me` costs
 * ~47 us. Asked on every request it was the largest single cost of the API's cached reads; asked
 * at most once a millisecond it costs well under 1 us a request at 20,000 requests/s. Writes of
 * this process are counted exactly (TableWrites) and are never stale.
 */
export const EXTERNAL_PROBE_INTERVAL_MS = 1;

/** `probe()`'s answer, asked again only when `intervalMs` passed since it was last asked (monotonic clock). */
export function throttledProbe(probe: () => number, intervalMs: number): () => number {
  let value = 0;
  let askedAt = Number.NEGATIVE_INFINITY;
  return () => {
    const now = performance.now();
    if (now - askedAt >= intervalMs) {
      value = probe();
      askedAt = now;
    }
    return value;
  };
}
