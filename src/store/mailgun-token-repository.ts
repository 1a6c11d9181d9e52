import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Mailgun tokens already accepted, kept in `platform_events` under `token:<token>` (provider
 * `mailgun`, no workspace, no executions): durable and shared by every process, so a replay is
 * refused whichever process takes it. A token only matters while its timestamp is within the
 * 300 s window, so rows older than twice that are pruned.
 */
export const MAILGUN_TOKEN_PREFIX = 'token:';

/** Records a token; false when it was recorded before (the primary key refuses it). */
export async function recordMailgunToken(
  db: Db,
  token: string,
  now: string,
  isUniqueViolation: (error: unknown) => boolean,
): Promise<boolean> {
  try {
    await db
      .insertInto('platform_events')
      .values({
        provider: 'mailgun',
        dedupe_key: `${MAILGUN_TOKEN_PREFIX}${token}`,
        workspace_id: null,
        execution_count: 0,
        created_at: now,
      })
      .execute();
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

export async function pruneMailgunTokens(db: Db, before: string): Promise<number> {
  const result = await db
    .deleteFrom('platform_events')
    .where('provider', '=', 'mailgun')
    .where('dedupe_key', 'like', sql<string>`${`${MAILGUN_TOKEN_PREFIX}%`}`)
    .where('created_at', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
