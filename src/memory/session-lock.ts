import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { MemorySessionRow } from '../store/memory-repository.js';

/**
 * One writer per session at a time. Every transaction that writes a session's messages (an
 * append from the API or an agent step, a compaction's summary or truncation, a clear, a
 * memory's deletion) locks the session row first and reads the session as it holds the lock,
 * so the positions it takes (`message_count + 1`…, unique per session) and the counters it
 * writes are those the previous writer committed.
 *
 * The lock is an UPDATE that changes nothing (`SET updated_at = updated_at … RETURNING *`):
 * on PostgreSQL it holds the row lock until the commit, across processes sharing the database,
 * and under READ COMMITTED the row it answers is the one the previous holder committed; on
 * SQLite it is the statement that makes the transaction the writer (one writer at a time, and
 * this process has one connection), so the same code serves both dialects without a
 * `FOR UPDATE` SQLite has no syntax for. It does not block readers, and the foreign-key checks
 * of inserted messages only take a KEY SHARE lock, which this NO KEY UPDATE lock admits.
 *
 * Lock order, so no two writers wait on each other in a cycle: a memory's row, then its
 * sessions, then their messages. Before issue 36 the summary was written under no lock: it took
 * the position an uncommitted append also held and failed on `memory_messages_session_idx` (or,
 * when it inserted first, waited for the append's session lock while the append waited for it).
 * A first message upserts the session instead (openSession), which locks it just the same.
 */
export function lockSession(trx: Transaction<Database>, workspaceId: string, sessionId: string): Promise<MemorySessionRow | undefined> {
  return trx
    .updateTable('memory_sessions')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', sessionId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * The session `key` of a memory, locked, created first when it has no message yet: one upsert
 * (`INSERT … ON CONFLICT (memory_id, session_key) DO UPDATE … RETURNING *`). PostgreSQL
 * guarantees it either inserts or locks the row that conflicts, waiting for a concurrent first
 * message or clear, even for a row its snapshot cannot see. A lookup, then an insert doing
 * nothing on conflict, then a lookup again (three rounds) was the first try: with 6 writers
 * racing 2 clearers it still missed the session a clear had just replaced, in 3 runs of 3.
 */
export function openSession(trx: Transaction<Database>, fresh: MemorySessionRow): Promise<MemorySessionRow> {
  return trx
    .insertInto('memory_sessions')
    .values(fresh)
    .onConflict((conflict) =>
      conflict.columns(['memory_id', 'session_key']).doUpdateSet((eb) => ({ updated_at: eb.ref('memory_sessions.updated_at') })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Every session of a memory locked (its deletion), after the memory's own row: two deletions
 * of one memory queue on that row instead of locking its sessions in different orders.
 */
export async function lockMemorySessions(trx: Transaction<Database>, workspaceId: string, memoryId: string): Promise<void> {
  await trx
    .updateTable('memories')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', memoryId)
    .execute();
  await trx
    .updateTable('memory_sessions')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('workspace_id', '=', workspaceId)
    .where('memory_id', '=', memoryId)
    .execute();
}
