import type { Kysely, Transaction } from 'kysely';
import type { Database, KnowledgeDocumentsTable } from '../db/schema.js';

export type KnowledgeDocumentRow = KnowledgeDocumentsTable;
type Db = Kysely<Database> | Transaction<Database>;

/** Documents of one workspace; most queries also name the knowledge base. */
export class KnowledgeDocumentRepository {
  constructor(private readonly db: Db, readonly workspaceId: string) {}

  withTransaction(trx: Transaction<Database>): KnowledgeDocumentRepository {
    return new KnowledgeDocumentRepository(trx, this.workspaceId);
  }

  selectBase(baseId: string) {
    return this.db.selectFrom('knowledge_documents').where('knowledge_documents.workspace_id', '=', this.workspaceId).where('knowledge_documents.knowledge_base_id', '=', baseId);
  }

  find(baseId: string, id: string): Promise<KnowledgeDocumentRow | undefined> {
    return this.db.selectFrom('knowledge_documents').selectAll().where('workspace_id', '=', this.workspaceId).where('knowledge_base_id', '=', baseId).where('id', '=', id).executeTakeFirst();
  }

  findByIdentity(baseId: string, identity: string): Promise<KnowledgeDocumentRow | undefined> {
    return this.db.selectFrom('knowledge_documents').selectAll().where('workspace_id', '=', this.workspaceId).where('knowledge_base_id', '=', baseId).where('identity', '=', identity).executeTakeFirst();
  }

  async insert(row: KnowledgeDocumentRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('document row of another workspace');
    await this.db.insertInto('knowledge_documents').values(row).execute();
  }

  /** Updates a document; with `version`, only while it still has that version (a newer re-send wins). */
  async update(id: string, changes: Partial<Omit<KnowledgeDocumentRow, 'id' | 'workspace_id' | 'knowledge_base_id'>>, version?: number): Promise<boolean> {
    let query = this.db.updateTable('knowledge_documents').set(changes).where('workspace_id', '=', this.workspaceId).where('id', '=', id);
    if (version !== undefined) query = query.where('version', '=', version);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('knowledge_documents').where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  /** Documents of a base waiting for its re-embedding to finish before they can swap in. */
  async countPending(baseId: string): Promise<number> {
    const row = await this.db
      .selectFrom('knowledge_documents')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('workspace_id', '=', this.workspaceId)
      .where('knowledge_base_id', '=', baseId)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
