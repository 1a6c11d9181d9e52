import type { Kysely, Transaction } from 'kysely';
import type { Database, ExecutionsTable, ExecutionStepsTable, ExecutionStatus } from '../db/schema.js';

export type ExecutionRow = ExecutionsTable;
export type StepRow = ExecutionStepsTable;
type Db = Kysely<Database> | Transaction<Database>;

/** The engine's own reads and writes of executions; every statement is in plain view here. */
export async function insertExecution(db: Db, row: ExecutionRow, steps: StepRow[]): Promise<void> {
  await db.insertInto('executions').values(row).execute();
  if (steps.length > 0) await db.insertInto('execution_steps').values(steps).execute();
}

export function findExecution(db: Db, id: string): Promise<ExecutionRow | undefined> {
  return db.selectFrom('executions').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findExecutionInWorkspace(db: Db, workspaceId: string, id: string): Promise<ExecutionRow | undefined> {
  return db.selectFrom('executions').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export function listSteps(db: Db, executionId: string): Promise<StepRow[]> {
  return db.selectFrom('execution_steps').selectAll().where('workflow_execution_id', '=', executionId).orderBy('inserted_at').orderBy('id').execute();
}

export async function updateExecution(db: Db, id: string, changes: Partial<ExecutionRow>, onlyIf?: readonly ExecutionStatus[]): Promise<boolean> {
  let query = db.updateTable('executions').set(changes).where('id', '=', id);
  if (onlyIf) query = query.where('status', 'in', onlyIf);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function insertStep(db: Db, row: StepRow): Promise<void> {
  await db.insertInto('execution_steps').values(row).execute();
}

export async function updateStep(db: Db, id: string, changes: Partial<StepRow>): Promise<void> {
  await db.updateTable('execution_steps').set(changes).where('id', '=', id).execute();
}

/** Executions to resume at start: left running by a stopped process, or due. */
export function listResumable(db: Db, nowIso: string, limit: number): Promise<ExecutionRow[]> {
  return db
    .selectFrom('executions')
    .selectAll()
    .where((eb) => eb.or([eb('status', '=', 'running'), eb.and([eb('status', 'in', ['pending', 'waiting']), eb('run_at', '<=', nowIso)])]))
    .orderBy('run_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Pending or waiting executions due by `nowIso`, oldest first. */
export function listDue(db: Db, nowIso: string, limit: number): Promise<ExecutionRow[]> {
  return db
    .selectFrom('executions')
    .selectAll()
    .where('status', 'in', ['pending', 'waiting'])
    .where('run_at', '<=', nowIso)
    .orderBy('run_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The earliest run_at of a pending or waiting execution, for the next timer. */
export async function nextDueAt(db: Db): Promise<string | null> {
  const row = await db
    .selectFrom('executions')
    .select((eb) => eb.fn.min('run_at').as('next'))
    .where('status', 'in', ['pending', 'waiting'])
    .executeTakeFirst();
  return (row?.next as string | null | undefined) ?? null;
}
