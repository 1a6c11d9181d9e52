// Benchmark 4: call_workflow overhead. Parent webhook -> call_workflow(child, wait) -> set;
// child webhook -> set. Per run: the parent's completed call step (finished_at - started_at)
// minus the child execution (finished_at - started_at). Until the step is built it fails with
// `not_available`; the row then says so instead of failing the command.
import { calledChildGraph, callingParentGraph, CALL_NODE } from '../lib/engine-graphs.mjs';
import { micros, stepError } from '../lib/engine-db.mjs';
import { summary } from '../lib/stats.mjs';
import { assertCompleted } from './session.mjs';

const TITLE = 'call_workflow overhead (call step minus child execution)';
export const CALL_WORKFLOW_MISSING = 'call_workflow not available yet';

/** The parent's completed call step and the child it started; null when the step is not built. */
function callAndChild(session, parent) {
  const steps = session.db.steps(parent.id).filter((step) => step.node_id === CALL_NODE);
  const failed = steps.find((step) => step.status === 'failed');
  if (failed && stepError(failed)?.code === 'not_available') return { missing: stepError(failed).message };
  if (parent.status !== 'completed')
    throw new Error(`call_workflow: parent execution ${parent.id} ended ${parent.status}: ${parent.error ?? ''}`);
  const call = steps.find((step) => step.status === 'completed');
  if (!call) throw new Error(`call_workflow: parent execution ${parent.id} has no completed call step`);
  const children = session.db.children(parent.id);
  const byStep = children.find((child) => child.triggered_by_step_id === call.id);
  const child = byStep ?? (children.length === 1 ? children[0] : undefined);
  if (!child) throw new Error(`call_workflow: no child execution of ${parent.id} (${children.length} with parent_execution_id)`);
  assertCompleted(child, 'call_workflow child');
  return { call, child, linkedByStep: byStep !== undefined };
}

export async function measureCallWorkflow(session, { runs, warmup, log }) {
  const childId = await session.activeWorkflow('bench: called child', calledChildGraph());
  const parentId = await session.activeWorkflow('bench: calling parent', callingParentGraph(childId));

  const probe = callAndChild(session, await session.runToEnd(parentId, { probe: true }));
  if (probe.missing) {
    log(`${CALL_WORKFLOW_MISSING} (the step failed with not_available: ${probe.missing})`);
    return {
      rows: [{ benchmark: TITLE, goal: 'p50 at most 1 ms', measured: CALL_WORKFLOW_MISSING, verdict: 'NOT YET' }],
      details: [
        `${CALL_WORKFLOW_MISSING}: the call step failed with \`not_available\` ("${probe.missing}"). The benchmark is written and runs as soon as the step is built.`,
      ],
      raw: { available: false, reason: probe.missing },
    };
  }
  for (let i = 0; i < warmup; i += 1) callAndChild(session, await session.runToEnd(parentId, { warmup: i }));

  const overheadMs = [];
  const callMs = [];
  // Where the overhead sits: before the child starts (its admission) and after it ends (waking the parent).
  const beforeChildMs = [];
  const afterChildMs = [];
  let linkedByStep = 0;
  for (let i = 0; i < runs; i += 1) {
    const { call, child, linkedByStep: linked } = callAndChild(session, await session.runToEnd(parentId, { run: i }));
    const callDuration = micros(call.finished_at) - micros(call.started_at);
    const childDuration = micros(child.finished_at) - micros(child.started_at);
    overheadMs.push((callDuration - childDuration) / 1000);
    callMs.push(callDuration / 1000);
    beforeChildMs.push((micros(child.started_at) - micros(call.started_at)) / 1000);
    afterChildMs.push((micros(call.finished_at) - micros(child.finished_at)) / 1000);
    if (linked) linkedByStep += 1;
  }
  const overhead = summary(overheadMs);
  const ms = (value) => `${value.toFixed(3)} ms`;
  log(
    `call_workflow overhead over ${runs} runs: p50 ${ms(overhead.p50)}, p99 ${ms(overhead.p99)} (p50 call start to child start ${ms(summary(beforeChildMs).p50)}, child end to call end ${ms(summary(afterChildMs).p50)})`,
  );
  return {
    rows: [
      {
        benchmark: `${TITLE}, ${runs} sequential runs`,
        goal: 'p50 at most 1 ms',
        measured: ms(overhead.p50),
        verdict: overhead.p50 <= 1 ? 'PASS' : 'FAIL',
      },
    ],
    details: [
      `Overhead (ms): p50 ${ms(overhead.p50)}, mean ${ms(overhead.mean)}, p90 ${ms(overhead.p90)}, p99 ${ms(overhead.p99)}; the call step itself: p50 ${ms(summary(callMs).p50)}.`,
      `Of which (p50): call step start to child start ${ms(summary(beforeChildMs).p50)}; child end to call step end ${ms(summary(afterChildMs).p50)}.`,
      `Child found by \`triggered_by_step_id\` = the completed call step's id in ${linkedByStep} of ${runs} runs${linkedByStep < runs ? ' (the others by `parent_execution_id`)' : ''}.`,
    ],
    raw: {
      available: true,
      runs,
      warmup,
      overheadMs: overhead,
      callStepMs: summary(callMs),
      callStartToChildStartMs: summary(beforeChildMs),
      childEndToCallEndMs: summary(afterChildMs),
      linkedByStep,
    },
  };
}
