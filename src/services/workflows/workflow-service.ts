import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../errors/app-error.js';
import { newId, isUuid } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import { BUILD_MODES, type BuildMode, type Database } from '../../db/schema.js';
import { FolderRepository } from '../../store/folder-repository.js';
import { WorkflowRepository, type WorkflowRow } from '../../store/workflow-repository.js';
import { validateGraph } from '../../graph/validate-graph.js';
import { invalidGraph, runnableGraph } from './runnable-graph.js';
import { layoutGraph } from '../../graph/layout-graph.js';
import type { Graph } from '../../graph/graph-types.js';
import { POSITION_STEP } from '../../lib/positions.js';
import { placeAmong } from '../ordering.js';
import { readString, rejectUnknown, Violations, type AttributeInput } from '../attribute-input.js';
import { WebhookRepository } from '../../store/webhook-repository.js';
import { syncWebhooks } from '../webhooks/webhook-sync.js';
import { escapePointerToken } from '../../lib/json-pointer.js';
import { recordCalls } from './workflow-calls.js';
import { clearConnections } from './connection-bindings.js';
import { activateSchedules, deactivateSchedules } from '../schedules/schedule-sync.js';

export interface Actor {
  workspaceId: string;
  userId: string;
}

const EMPTY_GRAPH: Graph = { nodes: [], edges: [] };
/** `document` is read by WorkflowImports (workflow-import.ts); the route sends those bodies there. */
const CREATE_ATTRIBUTES = ['name', 'description', 'ai_auto_probe', 'build_mode', 'build_prompt', 'folder_id'] as const;
const PATCH_ATTRIBUTES = ['name', 'description', 'error_workflow_id'] as const;

/** Workflow use cases. Every method takes the actor and works only inside its workspace. */
export class WorkflowService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    /** Seals webhook secrets; builds webhook URLs. */
    private readonly webhooks: { secretKey: string; baseUrl: string },
    /** Told after an activation or deactivation committed schedule changes (the scheduler looks again). */
    private readonly schedulesChanged: () => void = () => {},
  ) {}

  private workflows(actor: Actor): WorkflowRepository {
    return new WorkflowRepository(this.db, actor.workspaceId);
  }

  async get(actor: Actor, id: string): Promise<WorkflowRow> {
    const row = isUuid(id) ? await this.workflows(actor).find(id) : undefined;
    if (!row) throw notFound('workflow');
    return row;
  }

  async create(actor: Actor, input: AttributeInput): Promise<WorkflowRow> {
    const violations = new Violations();
    rejectUnknown(
      input,
      CREATE_ATTRIBUTES,
      violations,
      (name) => `${name} cannot be set on create (the graph is set with PUT /workflows/:id/graph, status by activate/deactivate)`,
    );
    const name = readString(input, 'name', violations, { required: true, max: 200 });
    const description = readString(input, 'description', violations, { max: 10_000, nullable: true });
    const buildPrompt = readString(input, 'build_prompt', violations, { max: 20_000, nullable: true });
    const autoProbe = input.values.ai_auto_probe;
    if (autoProbe !== undefined && typeof autoProbe !== 'boolean')
      violations.add(input.pointer('ai_auto_probe'), 'ai_auto_probe must be a boolean');
    const buildMode = input.values.build_mode;
    if (buildMode !== undefined && !BUILD_MODES.includes(buildMode as BuildMode))
      violations.add(input.pointer('build_mode'), `build_mode must be one of ${BUILD_MODES.join(', ')}`);
    const folderId = input.values.folder_id;
    if (folderId !== undefined && folderId !== null && !isUuid(folderId))
      violations.add(input.pointer('folder_id'), 'folder_id must be a folder id or null');
    violations.throwIfAny();
    if (typeof folderId === 'string' && !(await new FolderRepository(this.db, actor.workspaceId).find(folderId))) {
      throw new AppError('validation_failed', 'folder_id names no folder of this workspace', { pointer: input.pointer('folder_id') });
    }

    const now = this.clock.now();
    const repo = this.workflows(actor);
    const targetFolder = typeof folderId === 'string' ? folderId : null;
    const row: WorkflowRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      user_id: actor.userId,
      folder_id: targetFolder,
      position: ((await repo.maxPosition(targetFolder)) ?? 0) + POSITION_STEP,
      name: name!,
      description: description ?? null,
      status: 'inactive',
      ai_auto_probe: (autoProbe as boolean | undefined) ?? false,
      build_mode: (buildMode as BuildMode | undefined) ?? 'advanced',
      build_prompt: buildPrompt ?? null,
      graph: JSON.stringify(EMPTY_GRAPH),
      active_snapshot_id: null,
      export_key: newId(),
      error_workflow_id: null,
      created_at: now,
      updated_at: now,
    };
    await repo.insert(row);
    return row;
  }

  async update(actor: Actor, id: string, input: AttributeInput): Promise<WorkflowRow> {
    const current = await this.get(actor, id);
    const violations = new Violations();
    rejectUnknown(
      input,
      PATCH_ATTRIBUTES,
      violations,
      (name) => `${name} is not patchable: only name, description and error_workflow_id are`,
    );
    const name = readString(input, 'name', violations, { required: false, max: 200 });
    if (name === '') violations.add(input.pointer('name'), 'name must not be empty');
    const description = readString(input, 'description', violations, { max: 10_000, nullable: true });
    const errorWorkflowId = input.values.error_workflow_id;
    if (errorWorkflowId !== undefined && errorWorkflowId !== null && !isUuid(errorWorkflowId))
      violations.add(input.pointer('error_workflow_id'), 'error_workflow_id must be a workflow id or null');
    else if (errorWorkflowId === id)
      violations.add(input.pointer('error_workflow_id'), 'error_workflow_id must name another workflow, not this one');
    violations.throwIfAny();
    if (typeof errorWorkflowId === 'string' && !(await this.workflows(actor).find(errorWorkflowId))) {
      throw new AppError('validation_failed', 'error_workflow_id names no workflow of this workspace', {
        pointer: input.pointer('error_workflow_id'),
      });
    }
    const changes: Partial<WorkflowRow> = { updated_at: this.clock.now() };
    if (name) changes.name = name;
    if (description !== undefined) changes.description = description;
    if (errorWorkflowId !== undefined) changes.error_workflow_id = errorWorkflowId as string | null;
    await this.workflows(actor).update(id, changes);
    return { ...current, ...changes };
  }

  /** Workflows that named this one as their error workflow name none afterwards (same transaction). */
  async remove(actor: Actor, id: string): Promise<void> {
    await this.get(actor, id);
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('workflows')
        .set({ error_workflow_id: null })
        .where('workspace_id', '=', actor.workspaceId)
        .where('error_workflow_id', '=', id)
        .execute();
      await this.workflows(actor).withTransaction(trx).delete(id);
    });
  }

  /**
   * Validates the live canvas and freezes it into a new snapshot the workflow then runs.
   * Activating an active workflow publishes the current canvas as a new snapshot; earlier
   * snapshots stay for audit.
   */
  async activate(actor: Actor, id: string): Promise<WorkflowRow> {
    const current = await this.get(actor, id);
    const graph = runnableGraph(current.graph);
    await this.requireSecrets(actor, id, graph);
    const now = this.clock.now();
    const snapshotId = newId();
    await this.db.transaction().execute(async (trx) => {
      const repo = this.workflows(actor).withTransaction(trx);
      await repo.insertSnapshot({
        id: snapshotId,
        workspace_id: actor.workspaceId,
        workflow_id: id,
        graph: JSON.stringify(graph),
        created_by: actor.userId,
        created_at: now,
        draft: false,
      });
      await repo.update(id, { status: 'active', active_snapshot_id: snapshotId, updated_at: now });
      await recordCalls(trx, actor.workspaceId, id, 'snapshot', graph);
      await activateSchedules({ trx, workspaceId: actor.workspaceId, workflowId: id, now }, snapshotId, graph);
    });
    this.schedulesChanged();
    return { ...current, status: 'active', active_snapshot_id: snapshotId, updated_at: now };
  }

  /**
   * An HMAC webhook whose secret was never set (an imported one: secrets never come from a
   * document) would refuse every delivery; activation says so with the pointer to set it.
   */
  private async requireSecrets(actor: Actor, id: string, graph: Graph): Promise<void> {
    const missing = (await new WebhookRepository(this.db, actor.workspaceId).listForWorkflow(id)).filter(
      (row) => row.verification === 'hmac' && row.secret_encrypted === null,
    );
    const items = missing.flatMap((row) => {
      const index = graph.nodes.findIndex((node) => node.id === row.node_id && node.type === 'webhook');
      if (index === -1) return [];
      const pointer = `/nodes/${index}/config/verification/secret`;
      return [
        {
          code: 'missing_secret',
          detail: `webhook node "${row.node_id}" verifies HMAC signatures but has no secret yet: set verification.secret with PUT /workflows/:id/graph`,
          source: { pointer: `/data/attributes/graph${pointer}` },
          meta: { node_id: row.node_id, pointer },
        },
      ];
    });
    if (items.length > 0) throw AppError.many('invalid_graph', items);
  }

  /** Stops the triggers; the snapshot stays recorded for audit. */
  async deactivate(actor: Actor, id: string): Promise<WorkflowRow> {
    const current = await this.get(actor, id);
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      await this.workflows(actor).withTransaction(trx).update(id, { status: 'inactive', updated_at: now });
      await deactivateSchedules({ trx, workspaceId: actor.workspaceId, workflowId: id, now });
    });
    return { ...current, status: 'inactive', updated_at: now };
  }

  /**
   * Copies a workflow into the same workspace, inactive. Its webhook nodes get endpoints of
   * their own (new ids and URLs; HMAC secrets carried over, bearer tokens new: rotate to see one).
   */
  async duplicate(actor: Actor, id: string): Promise<WorkflowRow> {
    const source = await this.get(actor, id);
    const now = this.clock.now();
    const repo = this.workflows(actor);
    const copyId = newId();
    return this.db.transaction().execute(async (trx) => {
      const sourceEndpoints = new Map(
        (await new WebhookRepository(trx, actor.workspaceId).listForWorkflow(source.id)).map((row) => [row.node_id, row]),
      );
      const copy: WorkflowRow = {
        ...source,
        id: copyId,
        user_id: actor.userId,
        name: `${source.name} (copy)`.slice(0, 200),
        status: 'inactive',
        active_snapshot_id: null,
        export_key: newId(),
        position: ((await repo.withTransaction(trx).maxPosition(source.folder_id)) ?? 0) + POSITION_STEP,
        created_at: now,
        updated_at: now,
      };
      await repo.withTransaction(trx).insert(copy);
      // Connection bindings reset (DESIGN.md): the copy names no connection until one is chosen.
      const graph = JSON.parse(source.graph) as Graph;
      clearConnections(graph);
      const synced = await syncWebhooks(
        { trx, workspaceId: actor.workspaceId, workflowId: copyId, ...this.webhooks, now, copyOf: sourceEndpoints },
        graph,
        '/data/attributes/graph',
      );
      copy.graph = JSON.stringify(synced.graph);
      await repo.withTransaction(trx).update(copyId, { graph: copy.graph });
      await recordCalls(trx, actor.workspaceId, copyId, 'canvas', synced.graph);
      return copy;
    });
  }

  async move(actor: Actor, id: string, input: AttributeInput): Promise<WorkflowRow> {
    const current = await this.get(actor, id);
    const violations = new Violations();
    rejectUnknown(
      input,
      ['folder_id', 'before_id', 'after_id'],
      violations,
      (name) => `${name} is not a move attribute (folder_id, before_id, after_id)`,
    );
    for (const field of ['folder_id', 'before_id', 'after_id'] as const) {
      const value = input.values[field];
      if (value !== undefined && value !== null && !isUuid(value)) violations.add(input.pointer(field), `${field} must be an id or null`);
    }
    if (input.values.before_id && input.values.after_id) violations.add(input.pointer('after_id'), 'give before_id or after_id, not both');
    violations.throwIfAny();

    const folderId = input.values.folder_id === undefined ? current.folder_id : (input.values.folder_id as string | null);
    if (folderId !== null && !(await new FolderRepository(this.db, actor.workspaceId).find(folderId))) {
      throw new AppError('validation_failed', 'folder_id names no folder of this workspace', { pointer: input.pointer('folder_id') });
    }
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      const repo = this.workflows(actor).withTransaction(trx);
      const siblings = await repo.listSiblingPositions(folderId);
      const placement = placeAmong(
        siblings,
        id,
        { beforeId: input.values.before_id as string | null, afterId: input.values.after_id as string | null },
        input.pointer,
      );
      for (const item of placement.renumbered ?? []) if (item.id !== id) await repo.update(item.id, { position: item.position });
      await repo.update(id, { folder_id: folderId, position: placement.position, updated_at: now });
      return { ...current, folder_id: folderId, position: placement.position, updated_at: now };
    });
  }

  /**
   * Replaces the live canvas and brings its webhook endpoints in line (see webhook-sync.ts), in
   * one transaction. Returns the stored (normalised, laid out) graph and the bearer tokens
   * minted for new webhook nodes, which are shown only here.
   */
  async putGraph(
    actor: Actor,
    id: string,
    data: unknown,
  ): Promise<{ workflow: WorkflowRow; graph: Graph; layout: boolean; webhookTokens: Record<string, string> }> {
    const current = await this.get(actor, id);
    if (!isPlainObject(data))
      throw new AppError('invalid_document', 'the body must be {"data": {"graph": {...}, "layout": true|false}}', { pointer: '/data' });
    const unknown = Object.keys(data).filter((key) => key !== 'graph' && key !== 'layout');
    if (unknown.length > 0)
      throw new AppError('validation_failed', `unknown member "${unknown[0]}": the body takes graph and layout`, {
        pointer: `/data/${escapePointerToken(unknown[0]!)}`,
      });
    if (data.layout !== undefined && typeof data.layout !== 'boolean')
      throw new AppError('validation_failed', 'layout must be a boolean', { pointer: '/data/layout' });
    if (data.graph === undefined) throw new AppError('validation_failed', 'graph is required', { pointer: '/data/graph' });
    const result = validateGraph(data.graph, '/data/graph');
    if (!result.ok) {
      throw invalidGraph(result.violations);
    }
    const layout = data.layout !== false;
    const laidOut = layout ? layoutGraph(result.graph) : result.graph;
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      const synced = await syncWebhooks(
        { trx, workspaceId: actor.workspaceId, workflowId: id, ...this.webhooks, now },
        laidOut,
        '/data/graph',
      );
      if (synced.violations.length > 0) throw invalidGraph(synced.violations);
      const text = JSON.stringify(synced.graph);
      await this.workflows(actor).withTransaction(trx).update(id, { graph: text, updated_at: now });
      await recordCalls(trx, actor.workspaceId, id, 'canvas', synced.graph);
      return { workflow: { ...current, graph: text, updated_at: now }, graph: synced.graph, layout, webhookTokens: synced.tokens };
    });
  }
}
