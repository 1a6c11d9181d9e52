import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Records a thread the installation's bot posted in; a thread already recorded is kept. */
export async function recordBotThread(
  db: Db,
  row: { installation_id: string; channel: string; thread_ts: string; created_at: string },
): Promise<void> {
  await db
    .insertInto('bot_threads')
    .values(row)
    .onConflict((oc) => oc.columns(['installation_id', 'channel', 'thread_ts']).doNothing())
    .execute();
}

export async function isBotThread(db: Db, installationId: string, channel: string, threadTs: string): Promise<boolean> {
  const row = await db
    .selectFrom('bot_threads')
    .select('thread_ts')
    .where('installation_id', '=', installationId)
    .where('channel', '=', channel)
    .where('thread_ts', '=', threadTs)
    .executeTakeFirst();
  return row !== undefined;
}
