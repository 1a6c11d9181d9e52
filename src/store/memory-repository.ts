import type { Kysely, Transaction } from 'kysely';
import type { Database, MemoriesTable, MemoryMessagesTable, MemorySessionsTable } from '../db/schema.js';

export type MemoryRow = MemoriesTable;
export type MemorySessionRow = MemorySessionsTable;
export type MemoryMessageRow = MemoryMessagesTable;
type Db = Kysely<Database> | Transaction<Database>;

/** Memories, their sessions and messages, of one workspace. */
export class MemoryRepository {
  constructor(
    private readonly db: Db,
    readonly workspaceId: string,
  ) {}

  withTransaction(trx: Transaction<Database>): MemoryRepository {
    return new MemoryRepository(trx, this.workspaceId);
  }

  selectBase() {
    return this.db.selectFrom('memories').where('memories.workspace_id', '=', this.workspaceId);
  }

  selectSessions(memoryId: string) {
    return this.db
      .selectFrom('memory_sessions')
      .where('memory_sessions.workspace_id', '=', this.workspaceId)
      .where('memory_sessions.memory_id', '=', memoryId);
  }

  selectMessages(sessionId: string) {
    return this.db
      .selectFrom('memory_messages')
      .where('memory_messages.workspace_id', '=', this.workspaceId)
      .where('memory_messages.session_id', '=', sessionId);
  }

  find(id: string): Promise<MemoryRow | undefined> {
    return this.db.selectFrom('memories').selectAll().where('workspace_id', '=', this.workspaceId).where('id', '=', id).executeTakeFirst();
  }

  async insert(row: MemoryRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('memory row of another workspace');
    await this.db.insertInto('memories').values(row).execute();
  }

  async update(id: string, changes: Partial<Omit<MemoryRow, 'id' | 'workspace_id'>>): Promise<void> {
    await this.db.updateTable('memories').set(changes).where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('memory_messages').where('workspace_id', '=', this.workspaceId).where('memory_id', '=', id).execute();
    await this.db.deleteFrom('memory_sessions').where('workspace_id', '=', this.workspaceId).where('memory_id', '=', id).execute();
    await this.db.deleteFrom('memories').where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  findSession(memoryId: string, key: string): Promise<MemorySessionRow | undefined> {
    return this.db
      .selectFrom('memory_sessions')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('memory_id', '=', memoryId)
      .where('session_key', '=', key)
      .executeTakeFirst();
  }

  findSessionById(id: string): Promise<MemorySessionRow | undefined> {
    return this.db
      .selectFrom('memory_sessions')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async insertSession(row: MemorySessionRow): Promise<void> {
    if (row.workspace_id !== this.workspaceId) throw new Error('session row of another workspace');
    await this.db.insertInto('memory_sessions').values(row).execute();
  }

  async updateSession(id: string, changes: Partial<Omit<MemorySessionRow, 'id' | 'workspace_id' | 'memory_id'>>): Promise<void> {
    await this.db.updateTable('memory_sessions').set(changes).where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  async deleteSession(id: string): Promise<void> {
    await this.db.deleteFrom('memory_messages').where('workspace_id', '=', this.workspaceId).where('session_id', '=', id).execute();
    await this.db.deleteFrom('memory_sessions').where('workspace_id', '=', this.workspaceId).where('id', '=', id).execute();
  }

  async insertMessages(rows: MemoryMessageRow[]): Promise<void> {
    if (rows.length === 0) return;
    if (rows.some((row) => row.workspace_id !== this.workspaceId)) throw new Error('message row of another workspace');
    await this.db.insertInto('memory_messages').values(rows).execute();
  }

  /** The session's messages in the prompt window, in order (summary included). */
  windowMessages(sessionId: string): Promise<MemoryMessageRow[]> {
    return this.db
      .selectFrom('memory_messages')
      .selectAll()
      .where('workspace_id', '=', this.workspaceId)
      .where('session_id', '=', sessionId)
      .where('in_window', '=', true)
      .orderBy('position')
      .execute();
  }

  /** Messages that left the window (recall candidates), summaries excluded. */
  outOfWindow(sessionId: string): Promise<Pick<MemoryMessageRow, 'id' | 'role' | 'content' | 'embedding' | 'position' | 'created_at'>[]> {
    return this.db
      .selectFrom('memory_messages')
      .select(['id', 'role', 'content', 'embedding', 'position', 'created_at'])
      .where('workspace_id', '=', this.workspaceId)
      .where('session_id', '=', sessionId)
      .where('in_window', '=', false)
      .where('role', '!=', 'summary')
      .execute();
  }

  async leaveWindow(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable('memory_messages')
      .set({ in_window: false })
      .where('workspace_id', '=', this.workspaceId)
      .where('id', 'in', ids)
      .execute();
  }
}
