import type { Kysely, Transaction } from 'kysely';
import { directWrites } from '../db/direct-writes.js';
import type { Database, KnowledgeDocumentsTable } from '../db/schema.js';

export type KnowledgeDocumentRow = KnowledgeDocumentsTable;
type Db = Kysely<Database> | Transaction<Database>;

/**
 * Documents of one workspace; most queries also name the knowledge base. Inside a transaction on
 * SQLite the reads and writes of the ingest path run as prepared statements (db/direct-writes.ts):
 * the query builder cost ~0.1 ms a statement, about a tenth of the ingest benchmark's CPU time.
 */
export class KnowledgeDocumentRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  withTransaction(trx: Transaction<Database>): KnowledgeDocumentRepository {
    return new KnowledgeDocumentRepository(trx, this.workspaceId);
  }

  selectBase(baseId: string) {
    return this.db
      .selectFrom('knowledge_documents')
      .where('knowledge_documents.workspace_id', '=', this.workspaceId)
      .where('knowledge_documents.knowledge_base_id', '=', baseId);
  }

  find(baseId: string, id: string): Promise<KnowledgeDocumentRow | undefined> {
    const direct = directWrites(this.db);
    if (direct) {
      const sqlText = 'select * from "knowledge_documents" where "id" = ? and "workspace_id" = ? and "knowledge_base_id" = ?';
      return Promise.resolve(direct.get(sqlText, [id, this.workspaceId, baseId]) as KnowledgeDocumentRow | undefined);
    }
    return this.db
      .selectFrom('knowledge_documents')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('knowledge_base_id', '=', baseId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  findByIdentity(baseId: string, identity: string): Promise<KnowledgeDocumentRow | undefined> {
    return this.db
      .selectFrom('knowledge_documents')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('knowledge_base_id', '=', baseId)
      .where('identity', '=', identity)
      .executeTakeFirst();
  }

  async insert(row: KnowledgeDocumentRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('document row of another workspace');
    const direct = directWrites(this.db);
    if (direct) direct.insert('knowledge_documents', row);
    else await this.db.insertInto('knowledge_documents').values(row).execute();
  }

  /** Updates a document; with `version`, only while it still has that version (a newer re-send wins). */
  async update(
    id: string,
    changes: Partial<Omit<KnowledgeDocumentRow, 'id' | 'workspace_id' | 'knowledge_base_id'>>,
    version?: number,
  ): Promise<boolean> {
    const direct = directWrites(this.db);
    if (direct) {
      const columns = Object.keys(changes).filter((column) => changes[column as keyof typeof changes] !== undefined);
      const values = columns.map((column) => changes[column as keyof typeof changes]);
      const condition = version === undefined ? '' : ' and "version" = ?';
      const sqlText = `update "knowledge_documents" set ${columns.map((column) => `"${column}" = ?`).join(', ')} where "id" = ? and "workspace_id" = ?${condition}`;
      return (
        direct.run(
          'knowledge_documents',
          sqlText,
          version === undefined ? [...values, id, this.workspaceId] : [...values, id, this.workspaceId, version],
        ) > 0
      );
    }
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
