import type { Kysely, Transaction } from 'kysely';
import type { Database, WorkflowFoldersTable } from '../db/schema.js';

export type FolderRow = WorkflowFoldersTable;
type Db = Kysely<Database> | Transaction<Database>;

/** Folders of one workspace. */
export class FolderRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  withTransaction(trx: Transaction<Database>): FolderRepository {
    return new FolderRepository(trx, this.workspaceId);
  }

  selectBase() {
    return this.db.selectFrom('workflow_folders').where('workflow_folders.workspace_id', '=', this.workspaceId);
  }

  find(id: string): Promise<FolderRow | undefined> {
    return this.db
      .selectFrom('workflow_folders')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  findMany(ids: string[]): Promise<FolderRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('workflow_folders').selectAll().where('workspace_id', '=', this.workspaceId).where('id', 'in', ids).execute();
  }

  async insert(row: FolderRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('folder row of another workspace');
    await this.db.insertInto('workflow_folders').values(row).execute();
  }

  async update(id: string, changes: Partial<Omit<FolderRow, 'id' | 'workspace_id'>>): Promise<void> {
    await this.db.updateTable('workflow_folders').set(changes).where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('workflow_folders').where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  async countChildren(id: string): Promise<number> {
    const row = await this.db
      .selectFrom('workflow_folders')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('workspace_id', '=', this.workspaceId)
      .where('parent_id', '=', id)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async moveChildrenToRoot(id: string, now: string): Promise<void> {
    await this.db
      .updateTable('workflow_folders')
      .set({ parent_id: null, updated_at: now })
      .where('workspace_id', '=', this.workspaceId)
      .where('parent_id', '=', id)
      .execute();
  }

  listSiblingPositions(parentId: string | null): Promise<{ id: string; position: number }[]> {
    let query = this.db.selectFrom('workflow_folders').select(['id', 'position']).where('workspace_id', '=', this.workspaceId);
    query = parentId === null ? query.where('parent_id', 'is', null) : query.where('parent_id', '=', parentId);
    return query.orderBy('position').orderBy('id').execute();
  }
}
