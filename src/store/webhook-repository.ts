import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, WebhooksTable, WorkflowStatus } from '../db/schema.js';

export type WebhookRow = WebhooksTable;
type Db = Kysely<Database> | Transaction<Database>;

/** Webhook endpoints of one workspace: the workspace id is fixed at construction. */
export class WebhookRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  listForWorkflow(workflowId: string): Promise<WebhookRow[]> {
    return this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('workflow_id', '=', workflowId)
      .execute();
  }

  findByNode(workflowId: string, nodeId: string): Promise<WebhookRow | undefined> {
    return this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('workflow_id', '=', workflowId)
      .where('node_id', '=', nodeId)
      .executeTakeFirst();
  }

  async insert(row: WebhookRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('webhook row of another workspace');
    await this.db.insertInto('webhooks').values(row).execute();
  }

  async update(id: string, changes: Partial<Omit<WebhookRow, 'id' | 'workspace_id' | 'workflow_id'>>): Promise<void> {
    await this.db.updateTable('webhooks').set(changes).where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('webhooks').where('workspace_id', '=', this.workspaceId).where('id', 'in', ids).execute();
  }
}

/** What a delivery needs to know about its endpoint and workflow. */
export interface WebhookEndpoint extends WebhookRow {
  workflow_status: WorkflowStatus;
  active_snapshot_id: string | null;
  /** The live canvas (for the config of a capture while the workflow is inactive). */
  workflow_graph: string;
  /** With `rowStamp` asked (PostgreSQL): the versions of the two rows read, `<webhook xmin>:<workflow xmin>` (migration 0021). */
  row_stamp?: string;
}

/**
 * The endpoint behind a delivery's URL. Not scoped by workspace: the unguessable id in the URL
 * is what addresses it (like a bearer capability), and the row then names its workspace.
 */
export function findEndpoint(db: Db, webhookId: string, rowStamp = false): Promise<WebhookEndpoint | undefined> {
  const query = db
    .selectFrom('webhooks')
    .innerJoin('workflows', (join) =>
      join.onRef('workflows.id', '=', 'webhooks.workflow_id').onRef('workflows.workspace_id', '=', 'webhooks.workspace_id'),
    )
    .selectAll('webhooks')
    .select(['workflows.status as workflow_status', 'workflows.active_snapshot_id', 'workflows.graph as workflow_graph'])
    .where('webhooks.id', '=', webhookId);
  if (!rowStamp) return query.executeTakeFirst();
  return query.select(sql<string>`webhooks.xmin::text || ':' || workflows.xmin::text`.as('row_stamp')).executeTakeFirst();
}

/**
 * Records a captured delivery and ends capturing, only if the endpoint is still capturing: of
 * two deliveries racing, one is captured and the other is handled as a delivery.
 */
export async function recordCapture(db: Db, webhookId: string, capture: { payload: string; shape: string; at: string }): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({
      capturing: false,
      capture_payload: capture.payload,
      capture_shape: capture.shape,
      captured_at: capture.at,
      updated_at: capture.at,
    })
    .where('id', '=', webhookId)
    .where('capturing', '=', true)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The execution a delivery with this idempotency key started, if within the window. */
export async function findDelivery(db: Db, webhookId: string, key: string, sinceIso: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('execution_id')
    .where('webhook_id', '=', webhookId)
    .where('idempotency_key', '=', key)
    .where('created_at', '>', sinceIso)
    .executeTakeFirst();
  return row?.execution_id;
}

/**
 * Remembers a delivery's key; committed with its execution, so a second delivery with the key
 * fails here and its execution is not created. A row older than the window gives way first.
 */
export async function insertDelivery(
  db: Db,
  row: { webhook_id: string; idempotency_key: string; execution_id: string; created_at: string },
  staleBeforeIso: string,
): Promise<void> {
  await db
    .deleteFrom('webhook_deliveries')
    .where('webhook_id', '=', row.webhook_id)
    .where('idempotency_key', '=', row.idempotency_key)
    .where('created_at', '<=', staleBeforeIso)
    .execute();
  await db.insertInto('webhook_deliveries').values(row).execute();
}

/** Forgets idempotency keys older than `beforeIso` (retention). */
export async function pruneDeliveries(db: Db, beforeIso: string): Promise<number> {
  const result = await db.deleteFrom('webhook_deliveries').where('created_at', '<', beforeIso).executeTakeFirst();
  return Number(result.numDeletedRows);
}
