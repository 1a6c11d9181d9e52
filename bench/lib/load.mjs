// One target under load: a warm-up run (discarded: JIT, SQLite page cache, connection setup),
// then the measured run. Any error, timeout or non-2xx answer stops the benchmark.
import autocannon from 'autocannon';
import { monotonicMicros } from './hrtime.mjs';

function failuresOf(result) {
  return { errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx };
}

function assertClean(label, phase, result) {
  const failures = failuresOf(result);
  if (failures.errors + failures.timeouts + failures.non2xx > 0) {
    throw new Error(`${label}: ${phase} run had failures ${JSON.stringify(failures)}; the numbers would be meaningless`);
  }
}

/** One request description whose path walks through `paths` in turn, across all connections. */
function cyclingPaths(paths) {
  let next = 0;
  return [
    {
      setupRequest: (request) => {
        const path = paths[next % paths.length];
        next += 1;
        return { ...request, path };
      },
    },
  ];
}

/**
 * Returns the measured run's summary and autocannon's own latency, request and throughput stats.
 * `method` and `body` (a string) are optional: a GET without a body by default. `paths`, when
 * given, replaces the URL's path and query request after request, in turn.
 */
export async function measure({ label, url, headers, connections, duration, warmup, method, body, paths }) {
  // Only the options given: autocannon merges its defaults with Object.assign, so an undefined
  // `method` would replace its GET.
  const request = { url, connections, headers, ...(method ? { method } : {}), ...(body !== undefined ? { body } : {}) };
  const requests = () => (paths ? { requests: cyclingPaths(paths) } : {});
  const warm = warmup > 0 ? await autocannon({ ...request, ...requests(), duration: warmup }) : null;
  if (warm) assertClean(label, 'warm-up', warm);
  const from = monotonicMicros();
  const result = await autocannon({ ...request, ...requests(), duration });
  const span = [from, monotonicMicros()];
  assertClean(label, 'measured', result);
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    warmupRequests: warm?.requests.total ?? 0,
    /** When the measured run ran ([from, to] µs, lib/hrtime.mjs). */
    span,
    ...failuresOf(result),
    raw: {
      latency: result.latency,
      requests: result.requests,
      throughput: result.throughput,
      warmupRequestsPerSecond: warm?.requests.average ?? null,
    },
  };
}

/**
 * One autocannon run that never throws for the server's answers: where counting failures is the
 * point (many connections), they are returned. `errorCodes` counts socket errors by code
 * (ECONNRESET, EPIPE, ...) and timeouts; `expectBody` (a string) counts other answers as
 * mismatches. autocannon reopens a connection the server closes without counting anything, so
 * a caller that must know compares the server's own count of accepted connections.
 */
export async function load({ url, headers, connections, duration, method, body, expectBody }) {
  const run = autocannon({
    url,
    connections,
    duration,
    headers,
    ...(method ? { method } : {}),
    ...(body !== undefined ? { body } : {}),
    ...(expectBody !== undefined ? { expectBody } : {}),
  });
  const errorCodes = {};
  run.on('reqError', (error) => {
    const code = error?.code ?? error?.message ?? 'unknown';
    errorCodes[code] = (errorCodes[code] ?? 0) + 1;
  });
  const result = await run;
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    answers2xx: result['2xx'],
    ...failuresOf(result),
    mismatches: result.mismatches,
    resets: result.resets,
    statusCodes: result.statusCodeStats,
    errorCodes,
    raw: { latency: result.latency, requests: result.requests },
  };
}
