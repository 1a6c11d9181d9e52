import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../errors/app-error.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { Database } from '../../db/schema.js';
import { EngineBusyError, type Engine, type RerunRefusal } from '../../engine/engine.js';
import { NonRetriableError } from '../../engine/step-errors.js';
import { findExecutionInWorkspace } from '../../engine/execution-store.js';
import type { Graph } from '../../graph/graph-types.js';
import { runnableGraph } from '../workflows/runnable-graph.js';
import { WorkflowRepository, type WorkflowRow } from '../../store/workflow-repository.js';
import { FreshCache } from '../../lib/fresh-cache.js';
import type { DataStamp } from '../../db/data-stamp.js';
import type { Actor } from '../workflows/workflow-service.js';
import { escapePointerToken } from '../../lib/json-pointer.js';
import { actOnExecutions, type BulkAction } from './execution-bulk.js';

function onlyMembers(data: Record<string, unknown>, allowed: readonly string[], takes: string): void {
  for (const key of Object.keys(data)) {
    if (!allowed.includes(key))
      throw new AppError('validation_failed', `unknown member "${key}": ${takes}`, { pointer: `/data/${escapePointerToken(key)}` });
  }
}

function readDraft(data: Record<string, unknown>): boolean {
  if (data.draft !== undefined && typeof data.draft !== 'boolean')
    throw new AppError('validation_failed', 'draft must be a boolean', { pointer: '/data/draft' });
  return data.draft === true;
}

/** A re-run the engine refused, as a 422 pointing at from_node_id. */
function rerunRefused(refusal: RerunRefusal, fromNodeId: string, sourceId: string): AppError {
  const pointer = { pointer: '/data/from_node_id' };
  switch (refusal.reason) {
    case 'unknown_node':
      return new AppError('validation_failed', `node "${fromNodeId}" is not in the graph being run`, pointer);
    case 'in_loop_body':
      return new AppError(
        'validation_failed',
        `node "${fromNodeId}" is inside the body of loop "${refusal.loopNodeId}": re-run from the loop`,
        pointer,
      );
    case 'payloads_not_kept':
      return new AppError(
        'validation_failed',
        `execution ${sourceId} did not keep its step outputs (save_step_payloads: false), so nothing before "${fromNodeId}" can be reused`,
        pointer,
      );
    case 'upstream_incomplete':
      return new AppError(
        'validation_failed',
        `node "${refusal.nodeId}", upstream of "${fromNodeId}", has no completed record in execution ${sourceId}`,
        pointer,
      );
  }
}

/** How long `/run` waits for room when the engine's queue is full (admission control) before 503. */
const RUN_ADMISSION_TIMEOUT_MS = 30_000;

/** Starting and cancelling executions, always inside the actor's workspace. */
export class ExecutionService {
  /** Whether a snapshot is a draft run's; snapshots never change, so this never goes stale. */
  private readonly draftSnapshots = new Map<string, boolean>();
  /** call_workflow targets by workspace and id, fresh while no workflow row changed (SQLite only). */
  private readonly targets = new FreshCache<WorkflowRow | null>(1000);

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly engine: Engine,
    private readonly stamp: DataStamp | null = null,
  ) {}

  /**
   * `POST /workflows/:id/run`: an active workflow runs its pinned snapshot; `draft: true` runs
   * the live canvas (frozen into a draft snapshot, reused while the canvas is unchanged); an
   * inactive workflow without `draft` is 422. `input` becomes the trigger payload's body.
   */
  async run(actor: Actor, workflowId: string, data: Record<string, unknown>): Promise<{ execution_id: string; status: string }> {
    const repo = new WorkflowRepository(this.db, actor.workspaceId);
    const workflow = isUuid(workflowId) ? await repo.find(workflowId) : undefined;
    if (!workflow) throw notFound('workflow');
    for (const key of Object.keys(data)) {
      if (key !== 'draft' && key !== 'input')
        throw new AppError('validation_failed', `unknown member "${key}": run takes draft and input`, {
          pointer: `/data/${escapePointerToken(key)}`,
        });
    }
    if (data.draft !== undefined && typeof data.draft !== 'boolean')
      throw new AppError('validation_failed', 'draft must be a boolean', { pointer: '/data/draft' });
    const trigger = { method: 'RUN', headers: {}, query: {}, body: data.input === undefined ? null : data.input };

    let snapshotId: string;
    let graph: Graph | undefined;
    if (data.draft === true) {
      ({ snapshotId, graph } = await this.draftSnapshot(actor, repo, workflow.id, workflow.graph));
    } else {
      if (workflow.status !== 'active' || !workflow.active_snapshot_id) {
        throw new AppError(
          'validation_failed',
          'the workflow is inactive: activate it, or run the live canvas with {"data": {"draft": true}}',
          { pointer: '/data/draft' },
        );
      }
      // The engine reads the snapshot's graph only when it has not planned it yet.
      snapshotId = workflow.active_snapshot_id;
    }
    return this.whenAdmitted(() =>
      this.engine.run(
        { workspaceId: actor.workspaceId, workflowId: workflow.id, snapshotId, ...(graph ? { graph } : {}), userId: actor.userId, trigger },
        { admissionTimeoutMs: RUN_ADMISSION_TIMEOUT_MS },
      ),
    );
  }

  /**
   * The snapshot a call_workflow step runs: the target's pinned snapshot when it is active, or,
   * when the calling execution is itself a draft run, the target's live canvas (so a workflow
   * and the ones it calls can be tried out together before activation). Failures are the
   * step's (not retryable): an unknown workflow (or one of another workspace), an inactive one,
   * a canvas that cannot run.
   */
  async resolveCallTarget(request: {
    workspaceId: string;
    workflowId: string;
    parentSnapshotId: string;
  }): Promise<{ snapshotId: string; graph?: Graph }> {
    const repo = new WorkflowRepository(this.db, request.workspaceId);
    const workflow = isUuid(request.workflowId) ? await this.findTarget(repo, request.workflowId) : null;
    if (!workflow)
      throw new NonRetriableError(`workflow ${request.workflowId} does not exist in this workspace`, { code: 'workflow_not_found' });
    if (await this.isDraftSnapshot(request.parentSnapshotId)) {
      try {
        return await this.draftSnapshot({ workspaceId: request.workspaceId, userId: null }, repo, workflow.id, workflow.graph);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        throw new NonRetriableError(
          `the live canvas of workflow "${workflow.name}" (${workflow.id}) cannot run: ${error.items.map((item) => item.detail).join('; ')}`,
          { code: 'invalid_graph' },
        );
      }
    }
    if (workflow.status !== 'active' || !workflow.active_snapshot_id) {
      throw new NonRetriableError(
        `workflow "${workflow.name}" (${workflow.id}) is not active: activate it, or run the caller as a draft to call live canvases`,
        { code: 'workflow_inactive' },
      );
    }
    return { snapshotId: workflow.active_snapshot_id };
  }

  /** The call's target workflow; cached, since a call costs its look-ups on every run (call_workflow benchmark). */
  private async findTarget(repo: WorkflowRepository, id: string): Promise<WorkflowRow | null> {
    let stamp = this.stamp?.(['workflows']) ?? null;
    if (typeof stamp === 'object' && stamp !== null) stamp = await stamp;
    const key = `${repo.workspaceId}:${id}`;
    if (stamp !== null) {
      const cached = this.targets.get(key, stamp);
      if (cached !== undefined) return cached;
    }
    const row = (await repo.find(id)) ?? null;
    if (stamp !== null) this.targets.set(key, stamp, row);
    return row;
  }

  private async isDraftSnapshot(id: string): Promise<boolean> {
    const known = this.draftSnapshots.get(id);
    if (known !== undefined) return known;
    const row = await this.db.selectFrom('workflow_snapshots').select('draft').where('id', '=', id).executeTakeFirst();
    const draft = row !== undefined && Boolean(row.draft);
    if (this.draftSnapshots.size >= 10_000) this.draftSnapshots.clear();
    this.draftSnapshots.set(id, draft);
    return draft;
  }

  private async draftSnapshot(
    actor: { workspaceId: string; userId: string | null },
    repo: WorkflowRepository,
    workflowId: string,
    canvas: string,
  ): Promise<{ snapshotId: string; graph: Graph }> {
    const graph = runnableGraph(canvas);
    const text = JSON.stringify(graph);
    const latest = await repo.latestDraftSnapshot(workflowId);
    if (latest && latest.graph === text) return { snapshotId: latest.id, graph };
    const id = newId();
    await repo.insertSnapshot({
      id,
      workspace_id: actor.workspaceId,
      workflow_id: workflowId,
      graph: text,
      created_by: actor.userId,
      created_at: this.clock.now(),
      draft: true,
    });
    return { snapshotId: id, graph };
  }

  /** `POST /executions/:id/retry`: a failed execution runs again from its failed step, as a new execution. */
  async retry(actor: Actor, id: string): Promise<{ execution_id: string; status: string }> {
    const execution = isUuid(id) ? await findExecutionInWorkspace(this.db, actor.workspaceId, id) : undefined;
    if (!execution) throw notFound('execution');
    if (execution.status !== 'failed')
      throw new AppError('invalid_state', `only a failed execution can be retried; this one is ${execution.status}`);
    return this.engine.retry(execution, actor.userId);
  }

  /**
   * `POST /executions/:id/replay`: a new execution of the source's snapshot (or, `draft: true`,
   * the live canvas) with its trigger payload, `input` replacing the payload's body when given.
   */
  async replay(actor: Actor, id: string, data: Record<string, unknown>): Promise<{ execution_id: string }> {
    const source = await this.sourceExecution(actor, id);
    onlyMembers(data, ['input', 'draft'], 'replay takes input and draft');
    const draft = readDraft(data);
    const { snapshotId, graph } = draft ? await this.liveCanvas(actor, source.workflow_id) : await this.sourceSnapshot(source);
    const original = source.inputs === null ? { method: 'RUN', headers: {}, query: {}, body: null } : JSON.parse(source.inputs);
    const trigger = data.input === undefined ? original : { ...original, body: data.input };
    const started = await this.whenAdmitted(() =>
      this.engine.run(
        {
          workspaceId: actor.workspaceId,
          workflowId: source.workflow_id,
          snapshotId,
          ...(graph ? { graph } : {}),
          userId: actor.userId,
          trigger,
          replayOf: source.id,
        },
        { admissionTimeoutMs: RUN_ADMISSION_TIMEOUT_MS },
      ),
    );
    return { execution_id: started.execution_id };
  }

  /**
   * `POST /executions/:id/rerun`: a new execution that reuses the source's records of every node
   * before `from_node_id` and runs it and what follows (engine/run/rerun-start.ts); with
   * `draft: true`, of the live canvas. A source still running or waiting is re-run from the
   * records it has finished so far (DESIGN.md, run control).
   */
  async rerun(actor: Actor, id: string, data: Record<string, unknown>): Promise<{ execution_id: string }> {
    const source = await this.sourceExecution(actor, id);
    onlyMembers(data, ['from_node_id', 'draft'], 'rerun takes from_node_id and draft');
    const fromNodeId = data.from_node_id;
    if (typeof fromNodeId !== 'string' || fromNodeId.length === 0)
      throw new AppError('validation_failed', 'from_node_id is required: the id of the node to run again from', {
        pointer: '/data/from_node_id',
      });
    const draft = readDraft(data);
    // The source's own snapshot tells whether it kept step outputs: it must still exist.
    const kept = await this.sourceSnapshot(source);
    const target = draft ? await this.liveCanvas(actor, source.workflow_id) : kept;
    const started = await this.whenAdmitted(() => this.engine.rerun(source, { ...target, fromNodeId, userId: actor.userId }));
    if ('reason' in started) throw rerunRefused(started, fromNodeId, source.id);
    return { execution_id: started.execution_id };
  }

  /** The snapshot the source ran; 422 when it is gone (the workflow was deleted), pointing at `draft`. */
  private async sourceSnapshot(source: {
    workflow_snapshot_id: string;
    workspace_id: string;
  }): Promise<{ snapshotId: string; graph?: Graph }> {
    const found = await this.db
      .selectFrom('workflow_snapshots')
      .select('id')
      .where('id', '=', source.workflow_snapshot_id)
      .where('workspace_id', '=', source.workspace_id)
      .executeTakeFirst();
    if (!found)
      throw new AppError('validation_failed', 'the snapshot this execution ran no longer exists: run the live canvas with draft: true', {
        pointer: '/data/draft',
      });
    return { snapshotId: found.id };
  }

  private async sourceExecution(actor: Actor, id: string) {
    const execution = isUuid(id) ? await findExecutionInWorkspace(this.db, actor.workspaceId, id) : undefined;
    if (!execution) throw notFound('execution');
    return execution;
  }

  /** The workflow's live canvas frozen for a draft run (422 when it cannot run; 404 when the workflow is gone). */
  private async liveCanvas(actor: Actor, workflowId: string): Promise<{ snapshotId: string; graph: Graph }> {
    const repo = new WorkflowRepository(this.db, actor.workspaceId);
    const workflow = await repo.find(workflowId);
    if (!workflow)
      throw new AppError('validation_failed', 'the workflow was deleted: there is no live canvas to run', { pointer: '/data/draft' });
    return this.draftSnapshot(actor, repo, workflow.id, workflow.graph);
  }

  private async whenAdmitted<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (error) {
      if (error instanceof EngineBusyError)
        throw new AppError('service_unavailable', 'the workflow engine is at capacity; retry later', undefined, {
          headers: { 'retry-after': '1' },
        });
      throw error;
    }
  }

  /** `POST /executions/cancel|retry`: the action on executions the caller's filter chose (execution-bulk.ts). */
  actOnMany(actor: Actor, action: BulkAction, ids: readonly string[]): Promise<number> {
    return actOnExecutions(this.db, this.engine, actor, action, ids);
  }

  /** Re-fetches the execution under the actor's workspace first (fail closed), then cancels. */
  async cancel(actor: Actor, id: string) {
    const execution = isUuid(id) ? await findExecutionInWorkspace(this.db, actor.workspaceId, id) : undefined;
    if (!execution) throw notFound('execution');
    const result = await this.engine.cancel(execution);
    if (!result.cancelled)
      throw new AppError(
        'invalid_state',
        `the execution is already ${result.status}; only pending, running or waiting executions can be cancelled`,
      );
    const updated = await findExecutionInWorkspace(this.db, actor.workspaceId, id);
    return updated!;
  }
}
