import type { Kysely, Transaction } from 'kysely';
import type { Database, WorkflowsTable, WorkflowSnapshotsTable } from '../db/schema.js';

export type WorkflowRow = WorkflowsTable;
export type WorkflowSnapshotRow = WorkflowSnapshotsTable;
type Db = Kysely<Database> | Transaction<Database>;

/** Workflows of one workspace: the workspace id is fixed at construction, so no query can forget it. */
export class WorkflowRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  withTransaction(trx: Transaction<Database>): WorkflowRepository {
    return new WorkflowRepository(trx, this.workspaceId);
  }

  /** The scoped base query for list routes; callers add columns, filters, sort and page. */
  selectBase() {
    return this.db.selectFrom('workflows').where('workflows.workspace_id', '=', this.workspaceId);
  }

  find(id: string): Promise<WorkflowRow | undefined> {
    return this.db.selectFrom('workflows').selectAll().where('workspace_id', '=', this.workspaceId).where('id', '=', id).executeTakeFirst();
  }

  async insert(row: WorkflowRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('workflow row of another workspace');
    await this.db.insertInto('workflows').values(row).execute();
  }

  async update(id: string, changes: Partial<Omit<WorkflowRow, 'id' | 'workspace_id'>>): Promise<boolean> {
    const result = await this.db
      .updateTable('workflows')
      .set(changes)
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('workflows')
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Siblings in a folder (null: root) by position, for sparse-position moves. */
  listSiblingPositions(folderId: string | null): Promise<{ id: string; position: number }[]> {
    let query = this.db.selectFrom('workflows').select(['id', 'position']).where('workspace_id', '=', this.workspaceId);
    query = folderId === null ? query.where('folder_id', 'is', null) : query.where('folder_id', '=', folderId);
    return query.orderBy('position').orderBy('id').execute();
  }

  async maxPosition(folderId: string | null): Promise<number | null> {
    let query = this.db
      .selectFrom('workflows')
      .select((eb) => eb.fn.max('position').as('max'))
      .where('workspace_id', '=', this.workspaceId);
    query = folderId === null ? query.where('folder_id', 'is', null) : query.where('folder_id', '=', folderId);
    const row = await query.executeTakeFirst();
    return row?.max === null || row?.max === undefined ? null : Number(row.max);
  }

  async moveFolderContentsToRoot(folderId: string, now: string): Promise<void> {
    await this.db
      .updateTable('workflows')
      .set({ folder_id: null, updated_at: now })
      .where('workspace_id', '=', this.workspaceId)
      .where('folder_id', '=', folderId)
      .execute();
  }

  async insertSnapshot(row: WorkflowSnapshotRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('snapshot row of another workspace');
    await this.db.insertInto('workflow_snapshots').values(row).execute();
  }

  latestDraftSnapshot(workflowId: string): Promise<WorkflowSnapshotRow | undefined> {
    return this.db
      .selectFrom('workflow_snapshots')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('workflow_id', '=', workflowId)
      .where('draft', '=', true)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst();
  }
}
