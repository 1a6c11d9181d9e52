// Benchmark 2: flatness. webhook -> 1,000 no-op steps. The overhead before step k is
// started_at(k) - finished_at(k-1); the medians of steps 951-1,000 and 1-50, pooled over the
// runs, are compared, so one slow commit does not decide.
import { chainGraph, chainStepId } from '../lib/engine-graphs.mjs';
import { micros } from '../lib/engine-db.mjs';
import { median } from '../lib/stats.mjs';
import { assertCompleted } from './session.mjs';

const STEPS = 1000;
const EDGE = 50;
const BLOCK = 100;

export async function measureFlatness(session, { runs, warmup, log }) {
  // The 1,001-node chain through the API (PUT /graph takes up to 2,000 nodes).
  const workflowId = await session.activeWorkflow(`bench: ${STEPS} no-op steps`, chainGraph(STEPS));
  for (let i = 0; i < warmup; i += 1) assertCompleted(await session.runToEnd(workflowId), 'flatness warm-up');

  const first = [];
  const last = [];
  const firstDurations = [];
  const lastDurations = [];
  const perRun = [];
  const blocks = Array.from({ length: STEPS / BLOCK }, () => []);
  for (let run = 0; run < runs; run += 1) {
    const execution = assertCompleted(await session.runToEnd(workflowId, { run }), 'flatness');
    const byNode = new Map(session.db.steps(execution.id).map((step) => [step.node_id, step]));
    const gaps = [];
    const durations = [];
    for (let k = 1; k <= STEPS; k += 1) {
      const previous = byNode.get(k === 1 ? 'trigger' : chainStepId(k - 1));
      const step = byNode.get(chainStepId(k));
      if (!previous || !step) throw new Error(`flatness: execution ${execution.id} lacks the row of step ${k}`);
      gaps.push((micros(step.started_at) - micros(previous.finished_at)) / 1000);
      durations.push((micros(step.finished_at) - micros(step.started_at)) / 1000);
    }
    firstDurations.push(...durations.slice(0, EDGE));
    lastDurations.push(...durations.slice(-EDGE));
    const head = gaps.slice(0, EDGE);
    const tail = gaps.slice(-EDGE);
    first.push(...head);
    last.push(...tail);
    gaps.forEach((gap, i) => blocks[Math.floor(i / BLOCK)].push(gap));
    const wallMs = (micros(execution.finished_at) - micros(execution.started_at)) / 1000;
    perRun.push({ firstMedianMs: median(head), lastMedianMs: median(tail), ratio: median(tail) / median(head), wallMs });
    log(
      `  run ${run + 1}/${runs}: ${Math.round(wallMs)} ms, overhead steps 1-${EDGE} ${(median(head) * 1000).toFixed(0)} µs, steps ${STEPS - EDGE + 1}-${STEPS} ${(median(tail) * 1000).toFixed(0)} µs`,
    );
  }

  const firstMs = median(first);
  const lastMs = median(last);
  const ratio = lastMs / firstMs;
  const us = (value) => `${(value * 1000).toFixed(0)} µs`;
  log(`flatness: last-${EDGE} median ${us(lastMs)} / first-${EDGE} median ${us(firstMs)} = ${ratio.toFixed(2)}x`);
  const rows = [
    {
      benchmark: `Flatness: ${STEPS.toLocaleString('en-US')} no-op steps, overhead of the last ${EDGE} vs the first ${EDGE} (medians, ${runs} runs)`,
      goal: `step ${STEPS.toLocaleString('en-US')}'s overhead at most 1.25x step 1's`,
      measured: `${ratio.toFixed(2)}x (${us(lastMs)} vs ${us(firstMs)})`,
      verdict: ratio <= 1.25 ? 'PASS' : 'FAIL',
    },
  ];
  // Not the goal's measure, but where a cost growing with the run's length would hide: work done
  // between a step's started_at and finished_at (building its expression scope, say).
  const durationRatio = median(lastDurations) / median(firstDurations);
  log(
    `a no-op step's own duration: last-${EDGE} median ${us(median(lastDurations))} / first-${EDGE} median ${us(median(firstDurations))} = ${durationRatio.toFixed(2)}x`,
  );
  rows.push({
    benchmark: `The same runs: a no-op step's own duration (finished_at - started_at), last ${EDGE} vs first ${EDGE}`,
    goal: 'informational',
    measured: `${durationRatio.toFixed(2)}x (${us(median(lastDurations))} vs ${us(median(firstDurations))})`,
    verdict: 'INFO',
  });
  return {
    rows,
    details: [
      `The ${(STEPS + 1).toLocaleString('en-US')}-node graph was pushed with PUT /graph and activated through the API.`,
      `Median overhead before a step, per block of ${BLOCK} steps: ${blocks.map((block, i) => `${i * BLOCK + 1}-${(i + 1) * BLOCK}: ${us(median(block))}`).join(', ')}.`,
      `Per run (last/first ratio): ${perRun.map((r) => `${r.ratio.toFixed(2)}x`).join(', ')}; execution wall time ${perRun.map((r) => `${Math.round(r.wallMs)} ms`).join(', ')}.`,
    ],
    raw: {
      steps: STEPS,
      runs,
      warmup,
      firstMedianMs: firstMs,
      lastMedianMs: lastMs,
      ratio,
      stepDurationFirstMedianMs: median(firstDurations),
      stepDurationLastMedianMs: median(lastDurations),
      stepDurationRatio: durationRatio,
      perRun,
      blockMediansMs: blocks.map((block) => median(block)),
    },
  };
}
