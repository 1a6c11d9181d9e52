// The figure of the agent benchmark, from the rows the engine stores for the agent node:
//   overhead per turn = (agent step span - sum of model_call spans - sum of tool_call spans) / turns
// and the loop that measures it per shape (warm-up runs discarded, then runs one at a time).
import { parseTimestampMicros } from '../../dist/lib/clock.js';
import { monotonicMicros } from '../lib/hrtime.mjs';
import { summary } from '../lib/stats.mjs';

const micros = (timestamp) => {
  const value = timestamp === null ? null : parseTimestampMicros(timestamp);
  if (value === null) throw new Error(`not a timestamp: ${timestamp}`);
  return value;
};
const span = (row) => micros(row.finished_at) - micros(row.started_at);

/** One run's figures (ms) from its agent-node rows `{kind, status, started_at, finished_at}`. */
export function overheadOf(rows, turns) {
  const agent = rows.filter((row) => row.kind === 'agent');
  const models = rows.filter((row) => row.kind === 'model_call');
  const tools = rows.filter((row) => row.kind === 'tool_call');
  if (agent.length !== 1 || agent[0].status !== 'completed')
    throw new Error(`expected one completed agent row, found ${JSON.stringify(agent)}`);
  if (models.length !== turns) throw new Error(`expected ${turns} model calls, found ${models.length}`);
  if (tools.length !== turns - 1) throw new Error(`expected ${turns - 1} tool calls, found ${tools.length}`);
  const modelUs = models.reduce((sum, row) => sum + span(row), 0);
  const toolUs = tools.reduce((sum, row) => sum + span(row), 0);
  // Where the overhead lies: before the first model call (the step's start, tools, prompt), between
  // the calls (each call's journal commit, argument checks), after the last (its commit, the output).
  const calls = [...models, ...tools].sort((a, b) => micros(a.started_at) - micros(b.started_at));
  const leadUs = micros(calls[0].started_at) - micros(agent[0].started_at);
  const tailUs = micros(agent[0].finished_at) - micros(calls.at(-1).finished_at);
  let betweenUs = 0;
  for (let i = 1; i < calls.length; i++) betweenUs += micros(calls[i].started_at) - micros(calls[i - 1].finished_at);
  return {
    overheadMs: (span(agent[0]) - modelUs - toolUs) / turns / 1000,
    stepMs: span(agent[0]) / 1000,
    modelMs: modelUs / turns / 1000,
    toolMs: tools.length ? toolUs / tools.length / 1000 : 0,
    leadMs: leadUs / 1000,
    betweenMs: calls.length > 1 ? betweenUs / (calls.length - 1) / 1000 : 0,
    tailMs: tailUs / 1000,
  };
}

/**
 * Per shape (1 and 3 turns): `warmup` runs discarded, then `runs` runs one after the other.
 * `runOnce(turns)` resolves with overheadOf's figures (plus `answerMs` when the caller timed the
 * whole request). `onMeasured(turns, from, to)` brackets the measured runs
 * (microseconds of the monotonic clock, lib/hrtime.mjs: a profile summary keeps those spans).
 */
export async function measureShapes({ label, runOnce, runs, warmup, log, onMeasured = () => {} }) {
  const results = {};
  for (const turns of [1, 3]) {
    for (let i = 0; i < warmup; i++) await runOnce(turns);
    const samples = [];
    const from = monotonicMicros();
    for (let i = 0; i < runs; i++) {
      samples.push(await runOnce(turns));
      if ((i + 1) % 100 === 0) log(`  ${label}, ${turns} turn(s): ${i + 1}/${runs} runs`);
    }
    onMeasured(turns, from, monotonicMicros());
    const of = (field) => summary(samples.map((s) => s[field]));
    results[turns] = {
      overheadPerTurnMs: of('overheadMs'),
      stepMs: of('stepMs'),
      modelCallMs: of('modelMs'),
      toolCallMs: of('toolMs'),
      beforeFirstCallMs: of('leadMs'),
      betweenCallsMs: of('betweenMs'),
      afterLastCallMs: of('tailMs'),
      ...(samples[0].answerMs === undefined ? {} : { answerMs: of('answerMs') }),
      // The runs behind the p99: which stretch took the time.
      worstRuns: [...samples]
        .sort((a, b) => b.overheadMs - a.overheadMs)
        .slice(0, 5)
        .map((sample) => Object.fromEntries(Object.entries(sample).map(([key, value]) => [key, Number(value.toFixed(3))]))),
    };
    log(
      `${label}, ${turns} turn(s): overhead per turn p50 ${results[turns].overheadPerTurnMs.p50} ms, p99 ${results[turns].overheadPerTurnMs.p99} ms`,
    );
  }
  return results;
}
