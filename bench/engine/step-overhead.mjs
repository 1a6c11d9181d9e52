// Benchmark 1: per-step orchestration overhead. webhook -> 40 no-op steps, run one at a time.
// Per execution: (execution wall time - the sum of its steps' own durations) / 40, from the
// microsecond timestamps the engine stores.
import { chainGraph, chainStepId } from '../lib/engine-graphs.mjs';
import { micros } from '../lib/engine-db.mjs';
import { summary } from '../lib/stats.mjs';
import { assertCompleted } from './session.mjs';

const STEPS = 40;

/** The longest wait between one step's end and the next one's start, in ms: a stall shows here. */
function longestGap(steps) {
  const byNode = new Map(steps.map((step) => [step.node_id, step]));
  let longest = 0;
  for (let k = 1; k <= STEPS; k += 1) {
    const previous = byNode.get(k === 1 ? 'trigger' : chainStepId(k - 1));
    longest = Math.max(longest, micros(byNode.get(chainStepId(k)).started_at) - micros(previous.finished_at));
  }
  return longest / 1000;
}

export async function measureStepOverhead(session, { runs, warmup, log }) {
  const workflowId = await session.activeWorkflow(`bench: ${STEPS} no-op steps`, chainGraph(STEPS));
  for (let i = 0; i < warmup; i += 1) assertCompleted(await session.runToEnd(workflowId), 'step overhead warm-up');

  const perStepMs = [];
  const wallMs = [];
  const stepMs = [];
  const gapMs = [];
  for (let i = 0; i < runs; i += 1) {
    const execution = assertCompleted(await session.runToEnd(workflowId, { run: i }), 'step overhead');
    const steps = session.db.steps(execution.id);
    if (steps.length !== STEPS + 1 || steps.some((step) => step.status !== 'completed')) {
      throw new Error(`step overhead: execution ${execution.id} has ${steps.length} step rows, expected ${STEPS + 1} completed`);
    }
    const wall = micros(execution.finished_at) - micros(execution.started_at);
    const inSteps = steps.reduce((sum, step) => sum + micros(step.finished_at) - micros(step.started_at), 0);
    perStepMs.push((wall - inSteps) / STEPS / 1000);
    wallMs.push(wall / 1000);
    stepMs.push(inSteps / (STEPS + 1) / 1000);
    gapMs.push(longestGap(steps));
    if ((i + 1) % 50 === 0) log(`  ${i + 1}/${runs} runs, overhead so far: mean ${summary(perStepMs).mean} ms/step`);
  }

  const overhead = summary(perStepMs);
  const ms = (value) => `${value.toFixed(3)} ms`;
  const slowest = perStepMs.map((value, i) => ({ value, gap: gapMs[i] })).filter((run) => run.value >= overhead.p99);
  log(`per-step overhead over ${runs} runs: mean ${ms(overhead.mean)}, p50 ${ms(overhead.p50)}, p99 ${ms(overhead.p99)} per step`);
  return {
    rows: [
      {
        benchmark: `Per-step orchestration overhead (${STEPS} no-op steps, ${runs} sequential runs)`,
        goal: 'mean at most 0.5 ms per step',
        measured: ms(overhead.mean),
        verdict: overhead.mean <= 0.5 ? 'PASS' : 'FAIL',
      },
      { benchmark: '', goal: 'p99 at most 1 ms per step', measured: ms(overhead.p99), verdict: overhead.p99 <= 1 ? 'PASS' : 'FAIL' },
    ],
    details: [
      `Overhead per step (ms): mean ${ms(overhead.mean)}, p50 ${ms(overhead.p50)}, p90 ${ms(overhead.p90)}, p99 ${ms(overhead.p99)}, min ${ms(overhead.min)}, max ${ms(overhead.max)}.`,
      `Runs at or above the p99 (${slowest.length}): overhead ${slowest.map((run) => ms(run.value)).join(', ')} per step; the longest single wait between two steps in each: ${slowest.map((run) => ms(run.gap)).join(', ')} (median over all runs: ${ms(summary(gapMs).p50)}).`,
      `Execution wall time (ms): p50 ${ms(summary(wallMs).p50)}, p99 ${ms(summary(wallMs).p99)}; a no-op step's own duration: mean ${(summary(stepMs).mean * 1000).toFixed(1)} µs.`,
    ],
    raw: {
      steps: STEPS,
      runs,
      warmup,
      overheadPerStepMs: overhead,
      executionWallMs: summary(wallMs),
      longestGapMs: summary(gapMs),
      stepDurationMs: summary(stepMs, 6),
      perRunOverheadMs: perStepMs.map((v) => Number(v.toFixed(5))),
    },
  };
}
