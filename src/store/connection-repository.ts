import type { Kysely, Transaction } from 'kysely';
import type { ConnectionsTable, Database } from '../db/schema.js';

export type ConnectionRow = ConnectionsTable;
type Db = Kysely<Database> | Transaction<Database>;

/** Model-provider connections of one workspace. */
export class ConnectionRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  selectBase() {
    return this.db.selectFrom('connections').where('connections.workspace_id', '=', this.workspaceId);
  }

  find(id: string): Promise<ConnectionRow | undefined> {
    return this.db
      .selectFrom('connections')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async insert(row: ConnectionRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('connection row of another workspace');
    await this.db.insertInto('connections').values(row).execute();
  }

  async update(id: string, changes: Partial<Omit<ConnectionRow, 'id' | 'workspace_id'>>): Promise<void> {
    await this.db.updateTable('connections').set(changes).where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('connections').where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  /** Names of the knowledge bases and memories that use a connection (their embedder or compaction model). */
  async users(id: string): Promise<string[]> {
    const pattern = `%"${id}"%`;
    const bases = await this.db
      .selectFrom('knowledge_bases')
      .select('name')
      .where('workspace_id', '=', this.workspaceId)
      .where((eb) => eb.or([eb('embedder', 'like', pattern), eb('index_embedder', 'like', pattern)]))
      .execute();
    const memories = await this.db
      .selectFrom('memories')
      .select('name')
      .where('workspace_id', '=', this.workspaceId)
      .where('compaction', 'like', pattern)
      .execute();
    return [...bases.map((b) => `knowledge base "${b.name}"`), ...memories.map((m) => `memory "${m.name}"`)];
  }
}
