import type { Clock } from '../lib/clock.js';
import { formatMicros } from '../lib/clock.js';
import type { StepSettings } from '../steps/step-runtime.js';
import { inputOf, isSettled, readyNodes, terminalOutput } from './dataflow.js';
import type { ExecutionRow, StepRow } from './execution-store.js';
import { insertStep, updateExecution, updateStep } from './execution-store.js';
import type { GraphPlan } from './graph-plan.js';
import { runAttempt } from './node-runner.js';
import type { RestoredState } from './restore-state.js';
import { json, stepRow } from './step-rows.js';
import type { WriteBatcher } from './write-batcher.js';

export interface RunDeps {
  clock: Clock;
  batcher: WriteBatcher;
  settings: StepSettings;
}

/** How a run of the loop ended: the execution finished, or it waits until `runAt`. */
export type RunEnd = { status: 'completed' | 'failed' | 'cancelled' } | { status: 'waiting'; runAt: string };

/**
 * Runs one execution from its current state until it finishes or has to wait. Each step's
 * result is made durable (group commit) before the steps after it start, so a crash re-runs at
 * most the step that was in flight. The last step's row and the execution's final state are
 * written in the same commit.
 */
export async function advanceExecution(
  deps: RunDeps,
  execution: ExecutionRow,
  plan: GraphPlan,
  restored: RestoredState,
  control: { signal: AbortSignal; cancelled: () => boolean },
): Promise<RunEnd> {
  const { clock, batcher } = deps;
  const { state, waiting, attempts } = restored;
  const trigger = execution.inputs === null ? null : JSON.parse(execution.inputs);
  const base = { executionId: execution.id, workspaceId: execution.workspace_id };
  let stepCount = restored.stepCount;
  /** Row writes waiting for the next commit: new rows, or updates of a waiting row resumed. */
  let pending: ({ insert: StepRow } | { update: string; row: StepRow })[] = [];
  let executionChanges: Partial<ExecutionRow> = {};

  const scopeFor = (nodeId: string) => ({
    trigger,
    nodes: Object.fromEntries(state.outputs),
    execution: { id: execution.id },
    workflow: { id: execution.workflow_id },
    input: inputOf(plan, state, nodeId),
    item: null,
    index: null,
  });

  /** Writes the queued rows (and maybe the execution's final state) in the next group commit. */
  const persist = (final?: Partial<ExecutionRow>) => {
    const writes = pending;
    const changes = { ...executionChanges, ...(final ?? {}) };
    pending = [];
    executionChanges = {};
    stepCount += writes.filter((w) => 'insert' in w).length;
    return batcher.write(async (trx) => {
      for (const write of writes) {
        if ('insert' in write) {
          await insertStep(trx, write.insert);
        } else {
          const { id: _id, inserted_at: _inserted, ...fields } = write.row;
          await updateStep(trx, write.update, fields);
        }
      }
      if (Object.keys(changes).length > 0) await updateExecution(trx, execution.id, { ...changes, step_count: stepCount }, ['running']);
    });
  };
  /** Queues a step row: it replaces the waiting row of a resumed attempt, else it is new. */
  const record = (row: StepRow, resumedStepId?: string) => {
    pending.push(resumedStepId ? { update: resumedStepId, row } : { insert: row });
  };

  while (true) {
    if (control.cancelled()) return { status: 'cancelled' };
    const now = clock.now();
    const { ready, skipped } = readyNodes(plan, state);
    for (const nodeId of skipped) record(stepRow({ ...base, nodeId, status: 'skipped', attempt: 1, startedAt: null, finishedAt: null, durationMs: null, kind: plan.nodes.get(nodeId)!.type, now }));
    // Waiting nodes that are due run now, ahead of newly ready ones.
    const due = [...waiting.values()].filter((w) => w.resumeAt <= now).map((w) => w.nodeId);
    const runnable = [...due, ...ready.filter((id) => !due.includes(id))];

    if (runnable.length === 0) {
      if (waiting.size > 0) {
        const runAt = [...waiting.values()].map((w) => w.resumeAt).sort()[0]!;
        await persist({ status: 'waiting', run_at: runAt, updated_at: now });
        return { status: 'waiting', runAt };
      }
      const settled = isSettled(state);
      await persist({
        status: settled ? 'completed' : 'failed',
        output: settled ? json(terminalOutput(plan, state)) : null,
        finished_at: now,
        updated_at: now,
        run_at: null,
        ...(settled ? {} : { error: JSON.stringify({ code: 'stalled', message: 'no node can run and the graph is not finished' }) }),
      });
      return { status: settled ? 'completed' : 'failed' };
    }

    // The previous step's result becomes durable before the next step starts (a crash then
    // re-runs only the step in flight); the last step's row waits for the final state instead.
    if (pending.length > 0 || Object.keys(executionChanges).length > 0) await persist();
    const nodeId = runnable[0]!;
    const node = plan.nodes.get(nodeId)!;
    const resumed = waiting.get(nodeId);
    const attempt = resumed?.attempt ?? (attempts.get(nodeId) ?? 0) + 1;
    attempts.set(nodeId, attempt);
    state.nodes.set(nodeId, 'running');
    const input = inputOf(plan, state, nodeId);
    const startedMs = clock.nowMs();
    const startedAt = clock.now();

    if (node.disabled) {
      // A disabled node passes its input through, recorded as skipped.
      waiting.delete(nodeId);
      state.nodes.set(nodeId, 'completed');
      state.outputs.set(nodeId, input);
      state.ports.set(nodeId, ['out']);
      state.completedOrder.push(nodeId);
      record(stepRow({ ...base, nodeId, status: 'skipped', attempt, startedAt, finishedAt: startedAt, durationMs: 0, kind: node.type, input, output: input, ports: ['out'], now: startedAt }));
      continue;
    }

    const outcome = await runAttempt({
      node,
      attempt,
      input,
      scope: scopeFor(nodeId),
      signal: control.signal,
      clock,
      settings: deps.settings,
      execution: { id: execution.id, workflowId: execution.workflow_id, workspaceId: execution.workspace_id },
      resuming: resumed !== undefined && node.type === 'wait',
    });
    if (control.cancelled()) return { status: 'cancelled' };
    const finishedAt = clock.now();
    const durationMs = Math.max(0, clock.nowMs() - startedMs);

    if (outcome.type === 'completed') {
      state.nodes.set(nodeId, 'completed');
      state.outputs.set(nodeId, outcome.output);
      state.ports.set(nodeId, outcome.ports);
      state.completedOrder.push(nodeId);
      waiting.delete(nodeId);
      record(
        stepRow({ ...base, nodeId, status: 'completed', attempt, startedAt, finishedAt, durationMs, kind: outcome.kind, provider: outcome.provider ?? null, input, output: outcome.output, logs: outcome.logs ?? null, ports: outcome.ports, memoryBytes: outcome.memoryBytes ?? null, reductions: outcome.reductions ?? null, resumeAt: resumed?.resumeAt ?? null, now: finishedAt }),
        resumed?.stepId,
      );
      // What a respond step answered goes on the execution, in the same commit.
      if (node.type === 'respond_to_webhook') executionChanges.response = json(outcome.output);
      continue;
    }

    if (outcome.type === 'wait') {
      const resumeAt = formatMicros(outcome.resumeAtMs * 1000);
      state.nodes.set(nodeId, 'waiting');
      const row = stepRow({ ...base, nodeId, status: 'waiting', attempt, startedAt, finishedAt: null, durationMs: null, kind: 'wait', input, resumeAt, now: startedAt });
      waiting.set(nodeId, { nodeId, stepId: row.id, attempt, resumeAt });
      record(row);
      continue;
    }

    // Failed attempt: its own row; then a retry, the error port, or the end of the run.
    waiting.delete(nodeId);
    const failed = { ...base, nodeId, status: 'failed' as const, attempt, startedAt, finishedAt, durationMs, kind: outcome.kind, input, error: outcome.error, resumeAt: resumed?.resumeAt ?? null, now: finishedAt };
    if (outcome.retryInMs !== null) {
      record(stepRow(failed), resumed?.stepId);
      if (outcome.retryInMs === 0) {
        // Ready again at once: its inputs are still resolved, and the attempt count goes on.
        state.nodes.set(nodeId, 'pending');
        continue;
      }
      const resumeAt = formatMicros((clock.nowMs() + outcome.retryInMs) * 1000);
      const next = stepRow({ ...base, nodeId, status: 'waiting', attempt: attempt + 1, startedAt: null, finishedAt: null, durationMs: null, kind: outcome.kind, resumeAt, now: finishedAt });
      record(next);
      state.nodes.set(nodeId, 'waiting');
      waiting.set(nodeId, { nodeId, stepId: next.id, attempt: attempt + 1, resumeAt });
      continue;
    }
    if (node.on_error === 'continue') {
      const output = { error: outcome.error };
      state.nodes.set(nodeId, 'failed');
      state.outputs.set(nodeId, output);
      state.ports.set(nodeId, ['error']);
      state.completedOrder.push(nodeId);
      record(stepRow({ ...failed, output, ports: ['error'] }), resumed?.stepId);
      continue;
    }
    record(stepRow(failed), resumed?.stepId);
    await persist({ status: 'failed', error: JSON.stringify({ ...outcome.error, node_id: nodeId }), finished_at: finishedAt, updated_at: finishedAt, run_at: null });
    return { status: 'failed' };
  }
}
