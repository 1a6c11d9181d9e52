/**
 * How stale this process may be about other processes' commits (the CLI revoking a token, say).
 * `PRAGMA data_version` opens a read transaction: two fcntl locks and an fstat on the WAL index,
 * ~14 us of CPU a call on the 2-core VM of bench/results, where a whole cached `GET /me` costs
 * ~47 us. Asked on every request it was the largest single cost of the API's cached reads; asked
 * at most once every 10 ms it is a fraction of a microsecond a request (at once a millisecond it
 * was still ~3% of a cached `GET /me`'s CPU in bench/results/profiles/me.txt). Another process's
 * commit (the admin CLI revoking a token) shows within 10 ms, far below what a person or a script
 * starting the CLI can notice. Writes of this process are counted exactly (TableWrites) and are
 * never stale.
 */
export const EXTERNAL_PROBE_INTERVAL_MS = 10;

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
