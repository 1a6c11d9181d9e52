// Benchmark 1: `immediate` webhook deliveries, webhook -> code, bearer verification. autocannon
// posts to the endpoint; what counts is executions COMPLETED per second, read from the database
// (finished_at inside a window timed by the server's clock), not the 202 answers, which only say
// that the execution row was committed. Each round also measures the bare baselines' hello world
// (node:http, Fastify) at the same connection count, back to back, for the informational ratios.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { micros } from '../lib/engine-db.mjs';
import { measure } from '../lib/load.mjs';
import { median } from '../lib/stats.mjs';
import { describeStretches, immediateStretches } from './timeline.mjs';

/** Load keeps running this long after the window closes, so the window never sees it stop. */
const TAIL_SECONDS = 1;
/** Load before the window opens, in every round (the JIT is warm from the warm-up run by then). */
export const RAMP_SECONDS = 1;
/** Step rows per execution: the webhook trigger and the code step. */
const STEPS_PER_EXECUTION = 2;

/** One measured load; the server has drained its backlog and every execution is checked when it returns. */
async function immediatePhase(session, target, { warmup, duration, connections }) {
  const { db } = session;
  const before = await session.state();
  const marks = {};
  let loop = null;
  const mark = async (name, seconds) => {
    await sleep(seconds * 1000);
    marks[name] = await session.state();
    // The main thread's busy share and turn length over the window (lib/probe.mjs).
    if (name === 'start') await session.eventLoop.start();
    else loop = await session.eventLoop.stop();
  };
  const window = Promise.all([mark('start', warmup), mark('end', warmup + duration)]);
  // If the load fails first, its error is the one reported; a mark failing afterwards is moot.
  window.catch(() => {});
  const http = await measure({
    label: 'immediate webhook',
    url: target.url,
    headers: target.headers,
    method: 'POST',
    body: target.body,
    connections,
    duration: warmup + duration + TAIL_SECONDS,
    warmup: 0,
  });
  await window;
  const atLoadEnd = db.statuses(target.workflowId, before.now);
  const drainStarted = performance.now();
  const counts = await session.waitForBacklog(target.workflowId, before.now);
  const drainMs = performance.now() - drainStarted;
  if (counts.failed || counts.cancelled) throw new Error(`immediate webhook: executions did not complete: ${JSON.stringify(counts)}`);

  const executions = counts.completed ?? 0;
  const steps = db.stepPayloads(target.workflowId, before.now);
  if (steps.completed !== executions * STEPS_PER_EXECUTION) {
    throw new Error(
      `immediate webhook: ${steps.completed} completed step rows for ${executions} executions, expected ${STEPS_PER_EXECUTION} each`,
    );
  }
  if (executions < http.requests)
    throw new Error(`immediate webhook: ${http.requests} answers 202 but only ${executions} executions recorded`);
  const windowSeconds = (micros(marks.end.now) - micros(marks.start.now)) / 1e6;
  const completedInWindow = db.completedBetween(target.workflowId, marks.start.now, marks.end.now);
  const span = db.span(target.workflowId, before.now);
  const inWindow = db.timeline(target.workflowId, marks.start.now, marks.end.now);
  return {
    completedPerSecond: completedInWindow / windowSeconds,
    completedInWindow,
    windowSeconds,
    wholeRunPerSecond: span.n / ((micros(span.last_finished) - micros(span.first_inserted)) / 1e6),
    executions,
    httpRequestsPerSecond: http.requestsPerSecond,
    httpP50Ms: http.p50,
    httpP99Ms: http.p99,
    backlogAtLoadEnd: (atLoadEnd.pending ?? 0) + (atLoadEnd.running ?? 0),
    drainMs: Math.round(drainMs),
    sqliteCommitsPerSecond: (marks.end.sqliteCommits - marks.start.sqliteCommits) / windowSeconds,
    eventLoop: loop,
    stretches: immediateStretches(inWindow),
  };
}

function barePhase(baseline, { duration, connections }) {
  return measure({ label: baseline.id, url: baseline.url, connections, duration, warmup: 0 });
}

/** `baselines`: `[{id, label, url}]` measured in every round (informational rows); empty for an extra target. */
export async function measureImmediateThroughput(session, target, baselines, { rounds, warmup, duration, connections, log }) {
  process.stdout.write(`  warm-up: ${[...baselines.map((b) => b.id), 'immediate webhook'].join(', ')}, ${warmup} s each ... `);
  for (const baseline of baselines) await barePhase(baseline, { duration: warmup, connections });
  const warm = await immediatePhase(session, target, { warmup: 0, duration: warmup, connections });
  console.log(`done (${Math.round(warm.completedPerSecond)} completed/s)`);

  const webhookPhases = [];
  const barePhases = Object.fromEntries(baselines.map((baseline) => [baseline.id, []]));
  for (let round = 1; round <= rounds; round += 1) {
    // Alternate the order, so neither always runs first in its round (the machine drifts).
    const steps = [...baselines, null];
    for (const baseline of round % 2 === 1 ? steps : [...steps].reverse()) {
      if (baseline) {
        process.stdout.write(`  round ${round}/${rounds}, ${baseline.label}: ${duration} s, ${connections} connections ... `);
        const phase = await barePhase(baseline, { duration, connections });
        barePhases[baseline.id].push(phase);
        console.log(`${Math.round(phase.requestsPerSecond)} req/s`);
      } else {
        process.stdout.write(
          `  round ${round}/${rounds}, immediate webhook -> code: ${RAMP_SECONDS} s + ${duration} s measured + ${TAIL_SECONDS} s, ${connections} connections ... `,
        );
        const phase = await immediatePhase(session, target, { warmup: RAMP_SECONDS, duration, connections });
        webhookPhases.push(phase);
        console.log(
          `${Math.round(phase.completedPerSecond)} completed/s (HTTP ${Math.round(phase.httpRequestsPerSecond)} answers/s, backlog ${phase.backlogAtLoadEnd} drained in ${phase.drainMs} ms)`,
        );
      }
    }
  }

  const rate = median(webhookPhases.map((p) => p.completedPerSecond));
  const perSecond = (value) => `${Math.round(value).toLocaleString('en-US')}/s`;
  const percent = (value) => `${(value * 100).toFixed(1)}%`;
  // Each round's pair ran back to back, so its ratio is not moved by the drift between rounds.
  const bare = baselines.map((baseline) => {
    const phases = barePhases[baseline.id];
    const roundRatios = webhookPhases.map((p, i) => p.completedPerSecond / phases[i].requestsPerSecond);
    return { ...baseline, phases, rate: median(phases.map((p) => p.requestsPerSecond)), roundRatios, ratio: median(roundRatios) };
  });
  log(
    `immediate webhook: ${perSecond(rate)} completed${bare.map((b) => `; ${b.id} ${perSecond(b.rate)}, ratio ${percent(b.ratio)}`).join('')}`,
  );

  return {
    rows: [
      {
        benchmark: `\`immediate\` webhook -> code, bearer: executions completed per second (${connections} connections, median of ${rounds} rounds)`,
        goal: 'at least 1,000 per second',
        measured: perSecond(rate),
        verdict: rate >= 1000 ? 'PASS' : 'FAIL',
      },
      ...bare.flatMap((b) => [
        {
          process: 'bare',
          benchmark: `${b.label}, same rounds, ${connections} connections`,
          goal: 'informational',
          measured: `${perSecond(b.rate)} (requests)`,
          verdict: 'INFO',
        },
        {
          benchmark: `Ratio: completed webhook executions per second / ${b.label} requests per second (median of the rounds' ratios)`,
          goal: 'informational',
          measured: percent(b.ratio),
          verdict: 'INFO',
        },
      ]),
    ],
    details: [
      `Per round, completed executions: ${webhookPhases.map((p) => `${perSecond(p.completedPerSecond)} (${p.completedInWindow} in ${p.windowSeconds.toFixed(2)} s; whole run incl. drain ${perSecond(p.wholeRunPerSecond)}; HTTP 202 answers ${perSecond(p.httpRequestsPerSecond)}, p50 ${p.httpP50Ms} ms, p99 ${p.httpP99Ms} ms; backlog at load end ${p.backlogAtLoadEnd}, drained in ${p.drainMs} ms)`).join('; ')}.`,
      ...bare.map(
        (b) =>
          `Per round, ${b.label}: ${b.phases.map((p) => `${perSecond(p.requestsPerSecond)} (p99 ${p.p99} ms)`).join('; ')}; ratios ${b.roundRatios.map(percent).join(', ')}.`,
      ),
      `Inside the measured windows (per round): ${webhookPhases.map((p) => `main thread busy ${(p.eventLoop.utilization * 100).toFixed(0)}%, event-loop delay p50 ${p.eventLoop.delayMs.p50} ms (p99 ${p.eventLoop.delayMs.p99} ms), ${Math.round(p.sqliteCommitsPerSecond)} SQLite commits/s`).join('; ')}.`,
      `Executions that completed inside the window, median round: ${describeStretches(webhookPhases.find((p) => p.completedPerSecond === rate)?.stretches ?? webhookPhases[0].stretches)}.`,
      `HTTP answers vs completions: the 202 is sent once the execution row is committed, so answers can run ahead of completions; the difference is the backlog the engine still had when the load stopped (median answers/s ${perSecond(median(webhookPhases.map((p) => p.httpRequestsPerSecond)))}).`,
      `Every execution created in these runs (${webhookPhases.reduce((sum, p) => sum + p.executions, 0)}) completed with its ${STEPS_PER_EXECUTION} step rows, checked after the backlog drained.`,
    ],
    raw: {
      connections,
      rounds,
      warmupSeconds: warmup,
      durationSeconds: duration,
      completedPerSecond: rate,
      webhookPhases,
      baselines: Object.fromEntries(
        bare.map((b) => [
          b.id,
          {
            requestsPerSecond: b.rate,
            ratio: b.ratio,
            roundRatios: b.roundRatios,
            phases: b.phases.map(({ requestsPerSecond, p50, p99, requests }) => ({ requestsPerSecond, p50, p99, requests })),
          },
        ]),
      ),
    },
  };
}
