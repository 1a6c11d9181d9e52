import type { Kysely, Transaction } from 'kysely';
import { directWrites } from '../db/direct-writes.js';
import type { Database, KnowledgeBasesTable } from '../db/schema.js';

export type KnowledgeBaseRow = KnowledgeBasesTable;
type Db = Kysely<Database> | Transaction<Database>;

/** Knowledge bases of one workspace. */
export class KnowledgeBaseRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  withTransaction(trx: Transaction<Database>): KnowledgeBaseRepository {
    return new KnowledgeBaseRepository(trx, this.workspaceId);
  }

  selectBase() {
    return this.db.selectFrom('knowledge_bases').where('knowledge_bases.workspace_id', '=', this.workspaceId);
  }

  find(id: string): Promise<KnowledgeBaseRow | undefined> {
    return this.db
      .selectFrom('knowledge_bases')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** The row locked for the rest of the transaction on PostgreSQL (SQLite holds its one writer anyway). */
  findForUpdate(id: string, postgres: boolean): Promise<KnowledgeBaseRow | undefined> {
    const direct = directWrites(this.db);
    if (direct)
      return Promise.resolve(
        direct.get('select * from "knowledge_bases" where "id" = ? and "workspace_id" = ?', [id, this.workspaceId]) as
          KnowledgeBaseRow | undefined,
      );
    const query = this.db.selectFrom('knowledge_bases').selectAll().where('workspace_id', '=', this.workspaceId).where('id', '=', id);
    return (postgres ? query.forUpdate() : query).executeTakeFirst();
  }

  async insert(row: KnowledgeBaseRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('knowledge base row of another workspace');
    await this.db.insertInto('knowledge_bases').values(row).execute();
  }

  async update(id: string, changes: Partial<Omit<KnowledgeBaseRow, 'id' | 'workspace_id'>>): Promise<void> {
    await this.db.updateTable('knowledge_bases').set(changes).where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  /** Adds to the counters (negative to remove). */
  async addCounts(id: string, documents: number, chunks: number, now: string): Promise<void> {
    if (documents === 0 && chunks === 0) return;
    const direct = directWrites(this.db);
    if (direct) {
      const sqlText =
        'update "knowledge_bases" set "document_count" = "document_count" + ?, "chunk_count" = "chunk_count" + ?, "updated_at" = ? where "id" = ? and "workspace_id" = ?';
      direct.run('knowledge_bases', sqlText, [documents, chunks, now, id, this.workspaceId]);
      return;
    }
    await this.db
      .updateTable('knowledge_bases')
      .set((eb) => ({ document_count: eb('document_count', '+', documents), chunk_count: eb('chunk_count', '+', chunks), updated_at: now }))
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('knowledge_bases').where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }
}
