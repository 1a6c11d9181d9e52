import type { Kysely, Transaction } from 'kysely';
import type { DialectName } from '../db/dialect/dialect.js';
import type { Database, SchedulesTable } from '../db/schema.js';

export type ScheduleRow = SchedulesTable;

/**
 * The `schedules` table. Rows are written by activation (services/schedules/schedule-sync.ts,
 * workspace-scoped by the workflow it was given) and read across workspaces by the scheduler,
 * which only ever acts on the row's own workspace and workflow.
 */
export function listWorkflowSchedules(
  db: Kysely<Database> | Transaction<Database>,
  workspaceId: string,
  workflowId: string,
): Promise<ScheduleRow[]> {
  return db.selectFrom('schedules').selectAll().where('workspace_id', '=', workspaceId).where('workflow_id', '=', workflowId).execute();
}

export async function deleteWorkflowSchedules(
  db: Kysely<Database> | Transaction<Database>,
  workspaceId: string,
  workflowId: string,
  keepIds: string[] = [],
): Promise<void> {
  let query = db.deleteFrom('schedules').where('workspace_id', '=', workspaceId).where('workflow_id', '=', workflowId);
  if (keepIds.length > 0) query = query.where('id', 'not in', keepIds);
  await query.execute();
}

export async function insertSchedule(trx: Transaction<Database>, row: ScheduleRow): Promise<void> {
  await trx.insertInto('schedules').values(row).execute();
}

export async function updateSchedule(trx: Transaction<Database>, id: string, changes: Partial<ScheduleRow>): Promise<void> {
  await trx.updateTable('schedules').set(changes).where('id', '=', id).execute();
}

/** Due rows, oldest fire time first (read without locks: `claimSchedules` decides). */
export function listDueSchedules(db: Kysely<Database>, now: string, limit: number): Promise<ScheduleRow[]> {
  return db
    .selectFrom('schedules')
    .selectAll()
    .where('next_fire_at', '<=', now)
    .orderBy('next_fire_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Inside the transaction that fires them: which of the rows read by `listDueSchedules` are still
 * as read (same next fire time and snapshot) and not being fired by another process. On
 * PostgreSQL the rows are locked `FOR UPDATE SKIP LOCKED`: a row another scheduler holds is left
 * to it, and one it already fired has moved on, so each fire time is claimed once. SQLite has one
 * writer (and one process), so the compare alone suffices.
 */
export async function claimSchedules(trx: Transaction<Database>, dialect: DialectName, read: ScheduleRow[]): Promise<Set<string>> {
  if (read.length === 0) return new Set();
  let query = trx
    .selectFrom('schedules')
    .select(['id', 'next_fire_at', 'snapshot_id'])
    .where(
      'id',
      'in',
      read.map((row) => row.id),
    );
  if (dialect === 'postgres') query = query.forUpdate().skipLocked();
  const current = new Map((await query.execute()).map((row) => [row.id, row]));
  const claimed = new Set<string>();
  for (const row of read) {
    const now = current.get(row.id);
    if (now && now.next_fire_at === row.next_fire_at && now.snapshot_id === row.snapshot_id) claimed.add(row.id);
  }
  return claimed;
}

/** The earliest stored fire time, for the scheduler's timer. */
export async function nextScheduleAt(db: Kysely<Database>): Promise<string | null> {
  const row = await db
    .selectFrom('schedules')
    .select((eb) => eb.fn.min('next_fire_at').as('next'))
    .executeTakeFirst();
  return (row?.next as string | null | undefined) ?? null;
}
