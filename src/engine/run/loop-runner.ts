import type { GraphNode } from '../../graph/graph-types.js';
import { LOOP_DONE_PORT } from '../../steps/loop/index.js';
import type { LoopProgress, RunHost } from './run-host.js';
import type { Outcome } from './run-types.js';
import type { StepRow } from '../execution-store.js';
import { resolveConfig } from '../expressions/expressions.js';
import type { GraphPlan } from './graph-plan.js';
import { restoreFrame, type FrameState } from './restore-state.js';
import { NonRetriableError, serializeStepError } from '../step-errors.js';

/** More items than this fail the loop: each item writes rows, and a runaway list should stop early. */
export const MAX_LOOP_ITEMS = 10_000;

/**
 * Runs a loop node: its body plan once per item, one item at a time, each iteration a frame of
 * its own (rows tagged with `loop_node_id` and `iter_index`). An iteration that waits makes the
 * loop wait; when it is due the loop resumes that iteration. After a restart the iterations are
 * rebuilt from their rows, so finished ones do not run again. The items are evaluated again
 * then, from the same node outputs.
 */
export async function runLoop(run: RunHost, frame: FrameState, node: GraphNode, input: unknown): Promise<Outcome> {
  const body = frame.plan.loops.get(node.id)!;
  let progress = run.loops.get(node.id);
  if (!progress) {
    let items: unknown[];
    try {
      items = await loopItems(node, await resolveConfig(node.config, run.scope(frame, input), { nodeId: node.id }));
    } catch (error) {
      return { type: 'failed', error: serializeStepError(error), retryInMs: null, kind: 'loop' };
    }
    progress = startProgress(body, frame, node.id, items, run.deps.clock.now());
    run.loops.set(node.id, progress);
  }
  while (progress.results.length < progress.items.length) {
    const index = progress.results.length;
    const iteration =
      progress.current ??
      progress.restored.get(index) ??
      restoreFrame(body, [], frame.flow.view, { nodeId: node.id, index, item: progress.items[index] });
    progress.restored.delete(index);
    progress.current = iteration;
    const end = await run.runFrame(iteration);
    if (end.status === 'cancelled') return { type: 'cancelled' };
    if (end.status === 'waiting') return { type: 'loop_waiting', runAt: end.runAt };
    if (end.status === 'failed') {
      run.loops.delete(node.id);
      const error = new NonRetriableError(`iteration ${index} of loop "${node.id}" failed at node "${end.nodeId}": ${end.error.message}`, {
        code: 'loop_iteration_failed',
        details: { iter_index: index, node_id: end.nodeId, error: end.error },
      });
      return { type: 'failed', error: serializeStepError(error), retryInMs: null, kind: 'loop', startedAt: progress.startedAt };
    }
    progress.results.push(iteration.flow.terminalOutput());
    progress.current = null;
  }
  run.loops.delete(node.id);
  return { type: 'completed', output: progress.results, ports: [LOOP_DONE_PORT], kind: 'loop', startedAt: progress.startedAt };
}

async function loopItems(node: GraphNode, config: Record<string, unknown>): Promise<unknown[]> {
  const items = config.items;
  if (!Array.isArray(items)) {
    throw new NonRetriableError(`node "${node.id}": config.items must be an array, got ${items === null ? 'null' : typeof items}`, {
      code: 'invalid_loop_items',
    });
  }
  if (items.length > MAX_LOOP_ITEMS) {
    throw new NonRetriableError(`node "${node.id}": a loop takes at most ${MAX_LOOP_ITEMS} items, got ${items.length}`, {
      code: 'too_many_loop_items',
    });
  }
  return items;
}

/** Progress of a loop that starts now, or resumes from rows an earlier process wrote. */
function startProgress(body: GraphPlan, frame: FrameState, loopId: string, items: unknown[], now: string): LoopProgress {
  const rows = frame.bodyRows.get(loopId) ?? [];
  frame.bodyRows.delete(loopId);
  const byIteration = new Map<number, StepRow[]>();
  for (const row of rows) {
    const index = row.iter_index ?? 0;
    byIteration.set(index, [...(byIteration.get(index) ?? []), row]);
  }
  const restored = new Map<number, FrameState>();
  for (const [index, list] of byIteration) {
    if (index < items.length) restored.set(index, restoreFrame(body, list, frame.flow.view, { nodeId: loopId, index, item: items[index] }));
  }
  const first = rows
    .map((row) => row.started_at)
    .filter((at): at is string => at !== null)
    .sort()[0];
  return { items, results: [], current: null, restored, startedAt: first ?? now };
}
