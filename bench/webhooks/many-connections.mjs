// Benchmark 3: 200 concurrent connections on the synchronous `respond_step` workflow (webhook ->
// code -> respond_to_webhook). Counted as failures: socket errors (by code), timeouts, non-2xx
// answers, answers with another body, and connections the server closed (autocannon reopens
// those silently, so the server's own count of accepted connections must equal 200). Throughput
// is compared with the peak of the same workflow at 8, 16 and 32 connections in the same round;
// the order of the four loads rotates from round to round.
import { load } from '../lib/load.mjs';
import { median } from '../lib/stats.mjs';

export const LOWER = [8, 16, 32];
export const MANY = 200;

const failuresOf = (phase) => phase.errors + phase.non2xx + phase.mismatches + phase.reconnections;

async function phase(session, target, connections, duration) {
  await session.eventLoop.start();
  const before = await session.state();
  const result = await load({
    url: target.url,
    headers: target.headers,
    method: 'POST',
    body: target.body,
    connections,
    duration,
    expectBody: target.expect.body,
  });
  const after = await session.state();
  const eventLoop = await session.eventLoop.stop();
  // Deliveries still running when the load stopped end in the background: let them, before the next load.
  await session.waitForBacklog(target.workflowId, before.now);
  const connectionsAccepted = after.connections - before.connections;
  return { connections, ...result, connectionsAccepted, reconnections: Math.max(0, connectionsAccepted - connections), eventLoop };
}

function line(p) {
  const failures = failuresOf(p);
  const codes = Object.entries(p.errorCodes)
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');
  return `${Math.round(p.requestsPerSecond)} req/s, p50 ${p.p50} ms, p99 ${p.p99} ms, main thread busy ${Math.round(p.eventLoop.utilization * 100)}%, ${p.connectionsAccepted} connections accepted${failures ? `, FAILURES: ${p.errors} errors (${codes || 'none'}; ${p.timeouts} timeouts), ${p.non2xx} non-2xx, ${p.mismatches} other bodies, ${p.reconnections} reconnections` : ', no failures'}`;
}

export async function measureManyConnections(session, target, { rounds, warmup, duration, log }) {
  const since = (await session.state()).now;
  process.stdout.write(`  warm-up: ${warmup} s at ${LOWER.at(-1)} connections ... `);
  await phase(session, target, LOWER.at(-1), warmup);
  console.log('done');

  const all = [...LOWER, MANY];
  const byRound = [];
  for (let round = 1; round <= rounds; round += 1) {
    const shift = (round - 1) % all.length;
    const order = [...all.slice(shift), ...all.slice(0, shift)];
    const measured = {};
    for (const connections of order) {
      process.stdout.write(`  round ${round}/${rounds}, ${connections} connections: ${duration} s ... `);
      measured[connections] = await phase(session, target, connections, duration);
      console.log(line(measured[connections]));
    }
    byRound.push(measured);
  }
  const counts = await session.waitForBacklog(target.workflowId, since);

  // Failures below 200 connections are not what is measured: they make the peak meaningless.
  const lowerFailures = byRound.flatMap((r) => LOWER.map((c) => r[c])).filter((p) => failuresOf(p) > 0);
  if (lowerFailures.length > 0)
    throw new Error(
      `respond_step at ${lowerFailures.map((p) => p.connections).join(', ')} connections had failures: ${lowerFailures.map(line).join(' | ')}`,
    );

  const many = byRound.map((r) => r[MANY]);
  const failures = many.reduce((sum, p) => sum + failuresOf(p), 0);
  const executionFailures = (counts.failed ?? 0) + (counts.cancelled ?? 0);
  const peaks = byRound.map((r) => Math.max(...LOWER.map((c) => r[c].requestsPerSecond)));
  const roundRatios = many.map((p, i) => p.requestsPerSecond / peaks[i]);
  const ratio = median(roundRatios);
  const medianAt = (c) => median(byRound.map((r) => r[c].requestsPerSecond));
  const percent = (value) => `${(value * 100).toFixed(1)}%`;
  const requests = many.reduce((sum, p) => sum + p.requests, 0);
  log(
    `${MANY} connections: ${failures} failures in ${requests} requests; throughput ${percent(ratio)} of the peak at ${LOWER.join('/')} connections`,
  );

  const title = `\`respond_step\` webhook -> code -> respond_to_webhook, bearer, ${MANY} concurrent connections (${rounds} rounds of ${duration} s)`;
  return {
    rows: [
      {
        benchmark: title,
        goal: 'zero errors (socket errors, timeouts, non-2xx, reconnections)',
        measured: `${failures} in ${requests.toLocaleString('en-US')} requests${executionFailures ? `; ${executionFailures} executions failed` : ''}`,
        verdict: failures === 0 && executionFailures === 0 ? 'PASS' : 'FAIL',
      },
      {
        benchmark: '',
        goal: `throughput at least 90% of the peak at ${LOWER.join(', ')} connections (median of the rounds' ratios)`,
        measured: `${percent(ratio)} (${Math.round(medianAt(MANY))} vs ${Math.round(median(peaks))} req/s)`,
        verdict: ratio >= 0.9 ? 'PASS' : 'FAIL',
      },
    ],
    details: [
      ...byRound.map(
        (r, i) =>
          `Round ${i + 1}: ${all.map((c) => `${c} connections: ${line(r[c])}`).join('; ')}; peak ${Math.round(peaks[i])} req/s, ratio ${percent(roundRatios[i])}.`,
      ),
      `Median req/s: ${all.map((c) => `${c} connections ${Math.round(medianAt(c))}`).join(', ')}.`,
      `Executions of this workflow over the benchmark, after the backlog drained: ${JSON.stringify(counts)}.`,
    ],
    raw: {
      rounds,
      warmupSeconds: warmup,
      durationSeconds: duration,
      lower: LOWER,
      many: MANY,
      failures,
      executionCounts: counts,
      ratio,
      roundRatios,
      peaks,
      byRound,
    },
  };
}
