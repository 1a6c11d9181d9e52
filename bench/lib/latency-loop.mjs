// Answer latency with sub-millisecond precision, which autocannon cannot give (it records whole
// milliseconds): `connections` keep-alive connections (undici `Client`s, one socket each, no
// pipelining), each sending one request after the other for `duration` seconds. A request's
// latency runs from just before `request()` to the last byte of its body, timed with
// process.hrtime. Any answer other than `expectStatus` with `expectBody`, and any socket
// error, is counted, never retried.
import { Client } from 'undici';
import { performance } from 'node:perf_hooks';
import { cpuPerDelivery } from './process-cpu.mjs';
import { quantile } from './stats.mjs';

/** Resolves with `{latenciesMs, requests, requestsPerSecond, failures, failureSamples, connectionsOpened}`. */
export async function latencyLoop({ origin, path, method = 'POST', headers, body, connections, duration, expectStatus = 200, expectBody }) {
  const latenciesMs = [];
  const failureSamples = [];
  let failures = 0;
  let connectionsOpened = 0;
  const started = performance.now();
  const deadline = started + duration * 1000;

  async function oneConnection() {
    const client = new Client(origin, { pipelining: 1, keepAliveTimeout: 120_000 });
    client.on('connect', () => {
      connectionsOpened += 1;
    });
    try {
      while (performance.now() < deadline) {
        const t0 = process.hrtime.bigint();
        let status = 0;
        let text = '';
        try {
          const answer = await client.request({ path, method, headers, body });
          status = answer.statusCode;
          text = await answer.body.text();
        } catch (error) {
          failures += 1;
          if (failureSamples.length < 5) failureSamples.push(`${error.code ?? ''} ${error.message}`.trim());
          continue;
        }
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (status !== expectStatus || (expectBody !== undefined && text !== expectBody)) {
          failures += 1;
          if (failureSamples.length < 5) failureSamples.push(`${status} ${text.slice(0, 200)}`);
          continue;
        }
        latenciesMs.push(ms);
      }
    } finally {
      await client.close();
    }
  }

  await Promise.all(Array.from({ length: connections }, () => oneConnection()));
  const seconds = (performance.now() - started) / 1000;
  return {
    latenciesMs,
    requests: latenciesMs.length + failures,
    requestsPerSecond: latenciesMs.length / seconds,
    failures,
    failureSamples,
    connectionsOpened,
  };
}

/**
 * The respond_step figures of one target: `load(seconds)` runs the 8-connection loop. The first
 * window is the cold figure; the load goes on until `settleS` seconds have passed; then the
 * measured window, with the CPU each of `cpuParts` (name -> a reading in ms, process-cpu.mjs)
 * and the load generator spent per answer in it: `{...measured, cpuPerDeliveryMs, cold}`.
 */
export async function settledRespond(load, durationS, settleS, cpuParts = {}) {
  const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
  const figures = (loop) => ({
    requests: loop.requests,
    failures: loop.failures,
    requestsPerSecond: round(loop.requestsPerSecond, 0),
    p50: round(quantile(loop.latenciesMs, 0.5)),
    p99: round(quantile(loop.latenciesMs, 0.99)),
  });
  const cold = figures(await load(durationS));
  if (settleS > durationS) await load(settleS - durationS);
  const measured = await cpuPerDelivery(
    cpuParts,
    () => load(durationS),
    (loop) => loop.latenciesMs.length,
  );
  return { ...figures(measured.result), cpuPerDeliveryMs: measured.perDeliveryMs, cold };
}
