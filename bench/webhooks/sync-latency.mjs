// Benchmark 2: how long a `respond_step` caller waits. webhook -> code -> respond_to_webhook,
// bearer verification; the answer is the respond step's `{status: 200, body: nodes.shape}`, sent
// once that step's result is committed. Latency is timed in the parent with process.hrtime
// around undici requests on keep-alive connections (lib/latency-loop.mjs), one after the other
// on each connection; 1 and 8 connections alternate over the rounds.
import { latencyLoop } from '../lib/latency-loop.mjs';
import { median, summary } from '../lib/stats.mjs';
import { describeStretches, respondStepStretches } from './timeline.mjs';

const CONNECTIONS = [1, 8];

/** SQLite commits between two probe readings (`state`): how many, their total time, how many took over 1 and 5 ms. */
function commitsBetween(before, after) {
  return {
    count: after.count - before.count,
    totalMs: after.totalMs - before.totalMs,
    over1ms: after.over1ms - before.over1ms,
    over5ms: after.over5ms - before.over5ms,
  };
}

async function phase(session, target, connections, duration) {
  const before = await session.state();
  const from = before.now;
  const result = await latencyLoop({
    origin: target.origin,
    path: target.path,
    headers: target.headers,
    body: target.body,
    connections,
    duration,
    expectStatus: target.expect.status,
    expectBody: target.expect.body,
  });
  // The run goes on after the answer (here only its final commit): let it end before the next
  // phase, read from the database file, then read the counters.
  await session.waitForBacklog(target.workflowId, from);
  const after = await session.state();
  const to = after.now;
  if (result.failures > 0)
    throw new Error(
      `respond_step latency, ${connections} connections: ${result.failures} failed requests (${result.failureSamples.join('; ')})`,
    );
  if (result.connectionsOpened !== connections)
    throw new Error(`respond_step latency: ${result.connectionsOpened} connections opened for ${connections} (the server closed some)`);
  return {
    ...summary(result.latenciesMs),
    requestsPerSecond: result.requestsPerSecond,
    samples: result.latenciesMs,
    window: { from, to },
    commits: commitsBetween(before.commitMs, after.commitMs),
  };
}

export async function measureSyncLatency(session, target, { rounds, warmup, duration, log }) {
  const since = (await session.state()).now;
  process.stdout.write(`  warm-up: ${warmup} s at each of ${CONNECTIONS.join(' and ')} connections ... `);
  for (const connections of CONNECTIONS) await phase(session, target, connections, warmup);
  console.log('done');

  const phases = Object.fromEntries(CONNECTIONS.map((c) => [c, []]));
  for (let round = 1; round <= rounds; round += 1) {
    for (const connections of round % 2 === 1 ? CONNECTIONS : [...CONNECTIONS].reverse()) {
      process.stdout.write(`  round ${round}/${rounds}, ${connections} connection${connections === 1 ? '' : 's'}: ${duration} s ... `);
      const measured = await phase(session, target, connections, duration);
      phases[connections].push(measured);
      console.log(
        `p50 ${measured.p50.toFixed(3)} ms, p99 ${measured.p99.toFixed(3)} ms (${measured.count} requests, ${Math.round(measured.requestsPerSecond)}/s)`,
      );
    }
  }
  const counts = await session.waitForBacklog(target.workflowId, since);
  if (counts.failed || counts.cancelled) throw new Error(`respond_step latency: executions did not complete: ${JSON.stringify(counts)}`);

  const stretchesAt = (connections) =>
    respondStepStretches(phases[connections].flatMap((p) => session.db.timeline(target.workflowId, p.window.from, p.window.to)));
  const stretches = { 1: stretchesAt(1), 8: stretchesAt(8) };
  const commitsAt = (connections) =>
    phases[connections]
      .map((p) => p.commits)
      .reduce((sum, c) => ({
        count: sum.count + c.count,
        totalMs: sum.totalMs + c.totalMs,
        over1ms: sum.over1ms + c.over1ms,
        over5ms: sum.over5ms + c.over5ms,
      }));
  const at = (connections, key) => median(phases[connections].map((p) => p[key]));
  const pooled = (connections) => summary(phases[connections].flatMap((p) => p.samples));
  const ms = (value) => `${value.toFixed(3)} ms`;
  const one = { p50: at(1, 'p50'), p99: at(1, 'p99') };
  const eight = { p50: at(8, 'p50'), p99: at(8, 'p99') };
  log(
    `respond_step latency: 1 connection p50 ${ms(one.p50)}, p99 ${ms(one.p99)}; 8 connections p50 ${ms(eight.p50)}, p99 ${ms(eight.p99)}`,
  );

  const title = (connections) =>
    `\`respond_step\` webhook -> code -> respond_to_webhook, bearer: answer latency at ${connections} connection${connections === 1 ? '' : 's'} (median of ${rounds} rounds of ${duration} s)`;
  const describe = (connections) => {
    const all = pooled(connections);
    const perRound = phases[connections]
      .map((p) => `p50 ${ms(p.p50)} / p99 ${ms(p.p99)} (${Math.round(p.requestsPerSecond)} req/s)`)
      .join('; ');
    return `${connections} connection${connections === 1 ? '' : 's'}, per round: ${perRound}. All ${all.count} requests pooled: mean ${ms(all.mean)}, p50 ${ms(all.p50)}, p90 ${ms(all.p90)}, p99 ${ms(all.p99)}, min ${ms(all.min)}, max ${ms(all.max)}. From the stored rows of the same executions: ${describeStretches(stretches[connections])}. SQLite commits meanwhile: ${commitsAt(connections).count}, mean ${(commitsAt(connections).totalMs / commitsAt(connections).count).toFixed(3)} ms, ${commitsAt(connections).over1ms} over 1 ms, ${commitsAt(connections).over5ms} over 5 ms.`;
  };
  return {
    rows: [
      { benchmark: title(1), goal: 'p50 at most 2 ms', measured: ms(one.p50), verdict: one.p50 <= 2 ? 'PASS' : 'FAIL' },
      { benchmark: '', goal: 'p99 at most 5 ms', measured: ms(one.p99), verdict: one.p99 <= 5 ? 'PASS' : 'FAIL' },
      { benchmark: title(8), goal: 'p99 at most 10 ms', measured: ms(eight.p99), verdict: eight.p99 <= 10 ? 'PASS' : 'FAIL' },
    ],
    details: [
      describe(1),
      describe(8),
      'Timed in the parent with process.hrtime around undici requests (keep-alive, one request at a time per connection), from the call to the last byte of the body; every answer was checked to be 200 with the expected body.',
    ],
    raw: {
      rounds,
      warmupSeconds: warmup,
      durationSeconds: duration,
      oneConnection: {
        ...one,
        pooled: pooled(1),
        stretches: stretches[1],
        commits: commitsAt(1),
        perRound: phases[1].map(({ samples: _samples, ...rest }) => rest),
      },
      eightConnections: {
        ...eight,
        pooled: pooled(8),
        stretches: stretches[8],
        commits: commitsAt(8),
        perRound: phases[8].map(({ samples: _samples, ...rest }) => rest),
      },
    },
  };
}
