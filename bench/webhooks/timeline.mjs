// Where an execution's time went, from the timestamps the engine stores (microseconds): medians
// over many executions of the stretches between its rows' starts and ends. The stretch between
// one step's end and the next one's start is mostly the group commit of the first.
import { summary } from '../lib/stats.mjs';

/** `{name: summary in ms}` over `executions` for each `[name, (execution) => microseconds]`. */
function stretches(executions, spec) {
  if (executions.length === 0) return {};
  return Object.fromEntries(
    spec.map(([name, of]) => [
      name,
      summary(
        executions.map((e) => of(e) / 1000),
        3,
      ),
    ]),
  );
}

/** webhook -> code -> respond_to_webhook (respond_step mode). */
export function respondStepStretches(executions) {
  return stretches(executions, [
    ['admission commit and start (inserted -> code step starts)', (e) => e.steps.shape.started_at - e.inserted_at],
    ['code step (pool wait + worker thread round trip)', (e) => e.steps.shape.finished_at - e.steps.shape.started_at],
    ['code step commit (code ends -> respond step starts)', (e) => e.steps.respond.started_at - e.steps.shape.finished_at],
    ['respond step (its expression)', (e) => e.steps.respond.finished_at - e.steps.respond.started_at],
    ['in the engine (inserted -> finished_at, before the last commit)', (e) => e.finished_at - e.inserted_at],
  ]);
}

/** webhook -> code (immediate mode): the wait in the queue, then the run. */
export function immediateStretches(executions) {
  return stretches(executions, [
    ['queued (inserted -> started)', (e) => e.started_at - e.inserted_at],
    ['running (started -> finished_at)', (e) => e.finished_at - e.started_at],
    ['code step (pool wait + worker thread round trip)', (e) => e.steps.shape.finished_at - e.steps.shape.started_at],
  ]);
}

/** One line of medians: "name p50 x ms (p99 y ms); ...". */
export function describeStretches(stretchMap) {
  return Object.entries(stretchMap)
    .map(([name, s]) => `${name}: p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms`)
    .join('; ');
}
