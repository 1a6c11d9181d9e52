import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, ExecutionsTable, ExecutionStepsTable, ExecutionStatus } from '../db/schema.js';
import { directWrites } from '../db/direct-writes.js';
import { flushBuffered, transactionBuffer } from '../db/transaction-buffer.js';

export type ExecutionRow = ExecutionsTable;

/** How an awaited child execution ended; `missing` when it was never committed (a crash in between). */
export interface ChildResult {
  status: 'completed' | 'failed' | 'cancelled' | 'missing';
  output: unknown;
  error: unknown;
}
export type StepRow = ExecutionStepsTable;
type Db = Kysely<Database> | Transaction<Database>;

/**
 * The engine's own reads and writes of executions; every statement is in plain view here. The
 * writes of every run (inserting rows, updating an execution or a step by id) take the direct
 * path inside a transaction where the dialect has one (db/direct-writes.ts), else the builder;
 * in a group commit on PostgreSQL, inserts wait for the commit's end (db/transaction-buffer.ts)
 * and a statement that reads or changes the executions' tables first sends them.
 */
export async function insertExecution(db: Db, row: ExecutionRow, steps: StepRow[]): Promise<void> {
  const direct = directWrites(db);
  if (direct) {
    direct.insert('executions', row);
    for (const step of steps) direct.insert('execution_steps', step);
    return;
  }
  const buffer = transactionBuffer(db);
  if (buffer?.insert('executions', row)) {
    for (const step of steps) buffer.insert('execution_steps', step);
    return;
  }
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
  return db
    .selectFrom('execution_steps')
    .selectAll()
    .where('workflow_execution_id', '=', executionId)
    .orderBy('inserted_at')
    .orderBy('id')
    .execute();
}

/** The step rows of several executions in one read (a worker's claimed batch), each list in `listSteps`' order. */
export async function listStepsOfMany(db: Db, executionIds: readonly string[]): Promise<Map<string, StepRow[]>> {
  const byExecution = new Map<string, StepRow[]>(executionIds.map((id) => [id, []]));
  if (executionIds.length === 0) return byExecution;
  const rows = await db
    .selectFrom('execution_steps')
    .selectAll()
    .where('workflow_execution_id', 'in', [...executionIds])
    .orderBy('workflow_execution_id')
    .orderBy('inserted_at')
    .orderBy('id')
    .execute();
  for (const row of rows) byExecution.get(row.workflow_execution_id)?.push(row);
  return byExecution;
}

export async function updateExecution(
  db: Db,
  id: string,
  changes: Partial<ExecutionRow>,
  onlyIf?: readonly ExecutionStatus[],
): Promise<boolean> {
  const direct = directWrites(db);
  if (direct) return direct.update('executions', changes, id, onlyIf) > 0;
  await flushBuffered(db, 'executions');
  let query = db.updateTable('executions').set(changes).where('id', '=', id);
  if (onlyIf) query = query.where('status', 'in', onlyIf);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function insertStep(db: Db, row: StepRow): Promise<void> {
  const direct = directWrites(db);
  if (direct) {
    direct.insert('execution_steps', row);
    return;
  }
  if (transactionBuffer(db)?.insert('execution_steps', row)) return;
  await db.insertInto('execution_steps').values(row).execute();
}

export async function updateStep(db: Db, id: string, changes: Partial<StepRow>): Promise<void> {
  const direct = directWrites(db);
  if (direct) {
    direct.update('execution_steps', changes, id);
    return;
  }
  await flushBuffered(db, 'execution_steps');
  await db.updateTable('execution_steps').set(changes).where('id', '=', id).execute();
}

/**
 * Executions to resume at start: left running by a stopped process (first), then those due.
 * Two queries, each matching a partial index (0005-lean-execution-indexes): `status = 'running'`
 * is a literal so both planners can match the index's condition.
 */
export async function listResumable(db: Db, nowIso: string, limit: number): Promise<ExecutionRow[]> {
  const running = await db
    .selectFrom('executions')
    .selectAll()
    .where(sql<boolean>`status = 'running'`)
    .orderBy('id')
    .limit(limit)
    .execute();
  if (running.length >= limit) return running;
  return [...running, ...(await listDue(db, nowIso, limit - running.length))];
}

/** Pending or waiting executions due by `nowIso`, oldest first, leaving out workflows at their limit. */
export function listDue(db: Db, nowIso: string, limit: number, blockedWorkflows: string[] = []): Promise<ExecutionRow[]> {
  let query = db.selectFrom('executions').selectAll().where('status', 'in', ['pending', 'waiting']).where('run_at', '<=', nowIso);
  if (blockedWorkflows.length > 0) query = query.where('workflow_id', 'not in', blockedWorkflows);
  return query.orderBy('run_at').orderBy('id').limit(limit).execute();
}

/** The earliest run_at of a pending or waiting execution, for the next timer. */
export async function nextDueAt(db: Db): Promise<string | null> {
  const row = await db
    .selectFrom('executions')
    .select((eb) => eb.fn.min('run_at').as('next'))
    .where('status', 'in', ['pending', 'waiting'])
    // Implied by min() (it skips nulls); spelled out so the partial index on run_at can serve it.
    .where('run_at', 'is not', null)
    .executeTakeFirst();
  return (row?.next as string | null | undefined) ?? null;
}

/**
 * With payload saving off, the commit that ends an execution drops the outputs its steps kept
 * for resumption (input and logs were never written).
 */
export async function clearStepPayloads(db: Db, executionId: string): Promise<void> {
  await flushBuffered(db, 'execution_steps');
  await db
    .updateTable('execution_steps')
    .set({ output: null })
    .where('workflow_execution_id', '=', executionId)
    .where('output', 'is not', null)
    .execute();
}

/**
 * A child execution ended: its parent, waiting on the call step that started it, becomes due
 * now. Written in the child's final commit, so a crash cannot separate the two.
 */
export async function wakeParent(db: Db, parentId: string, childId: string, nowIso: string): Promise<void> {
  await flushBuffered(db, 'execution_steps');
  await db
    .updateTable('executions')
    .set({ run_at: nowIso, updated_at: nowIso })
    .where('id', '=', parentId)
    .where('status', '=', 'waiting')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('execution_steps')
          .select('execution_steps.id')
          .where('execution_steps.workflow_execution_id', '=', parentId)
          .where('execution_steps.awaiting_workflow_execution_id', '=', childId)
          .where('execution_steps.status', '=', 'waiting'),
      ),
    )
    .execute();
}

/** The ended ones among these child executions (status, output, error), by id. */
export async function listEndedChildren(db: Db, ids: string[]): Promise<Pick<ExecutionRow, 'id' | 'status' | 'output' | 'error'>[]> {
  if (ids.length === 0) return [];
  await flushBuffered(db, 'executions');
  return db
    .selectFrom('executions')
    .select(['id', 'status', 'output', 'error'])
    .where('id', 'in', ids)
    .where('status', 'in', ['completed', 'failed', 'cancelled'])
    .execute();
}

/** The awaited children among these step rows that have ended, or were never committed (`missing`). */
export async function loadEndedChildren(db: Db, steps: StepRow[]): Promise<Map<string, ChildResult>> {
  const awaited = steps
    .filter((s) => s.status === 'waiting' && s.awaiting_workflow_execution_id !== null)
    .map((s) => s.awaiting_workflow_execution_id!);
  const children = new Map<string, ChildResult>();
  if (awaited.length === 0) return children;
  for (const child of await listEndedChildren(db, awaited)) {
    children.set(child.id, {
      status: child.status as ChildResult['status'],
      output: child.output === null ? null : JSON.parse(child.output),
      error: child.error === null ? null : JSON.parse(child.error),
    });
  }
  const existing = await existingExecutions(db, awaited);
  for (const id of awaited) if (!existing.has(id)) children.set(id, { status: 'missing', output: null, error: null });
  return children;
}

/** Which of these execution ids exist. */
async function existingExecutions(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('executions').select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}

/** Child executions a parent's waiting call steps await (cancelling the parent cancels them). */
export async function listAwaitedChildren(db: Db, parentId: string): Promise<ExecutionRow[]> {
  await flushBuffered(db, 'execution_steps');
  return db
    .selectFrom('executions')
    .selectAll()
    .where('parent_execution_id', '=', parentId)
    .where('status', 'in', ['pending', 'running', 'waiting'])
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('execution_steps')
        .select('awaiting_workflow_execution_id')
        .where('workflow_execution_id', '=', parentId)
        .where('status', '=', 'waiting')
        .where('awaiting_workflow_execution_id', 'is not', null),
    )
    .execute() as Promise<ExecutionRow[]>;
}

/**
 * A cancelled execution's attempts in flight (recorded `running` before their effect started)
 * end `failed` with `cancelled`, in the commit of the cancellation: the run that is stopped
 * writes nothing more, and may live in another process.
 */
export async function failRunningSteps(db: Db, executionId: string, error: string, nowIso: string): Promise<void> {
  await flushBuffered(db, 'execution_steps');
  await db
    .updateTable('execution_steps')
    .set({ status: 'failed', error, finished_at: nowIso, updated_at: nowIso })
    .where('workflow_execution_id', '=', executionId)
    .where('status', '=', 'running')
    .execute();
}
