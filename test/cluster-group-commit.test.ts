import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimExecutions, lockExecutions, updateHeldExecution } from '../src/engine/cluster/cluster-store.js';
import { insertExecution, insertStep, updateStep, type StepRow } from '../src/engine/execution-store.js';
import { newExecutionRow, runIdentity } from '../src/engine/run/execution-start.js';
import { LeaseLostError } from '../src/engine/commit/run-coordination.js';
import { stepRow } from '../src/engine/commit/step-rows.js';
import { WriteBatcher } from '../src/engine/commit/write-batcher.js';
import { newId } from '../src/lib/ids.js';
import { TEST_DATABASE_URL } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The group commit of a worker on PostgreSQL (engine/write-batcher.ts, db/transaction-buffer.ts,
 * engine/held-updates.ts): rows, lease-checked updates and notifications of many runs gathered
 * into few statements, and sent as one statement without a transaction when no write runs a
 * statement of its own. PostgreSQL only: on SQLite the engine writes through prepared statements
 * of its one connection and has no leases.
 */
const describePostgres = TEST_DATABASE_URL ? describe : describe.skip;

describePostgres('group commits of a worker [postgres]', () => {
  let t: TestApp;
  const owner = newId();

  beforeAll(async () => {
    t = await createTestApp('postgres');
    t.deps.engine.cluster?.stopClaiming();
  });
  afterAll(async () => {
    await t.close();
  });

  const batcher = () => new WriteBatcher(t.deps.db, lockExecutions);
  /** A pending execution (with its trigger's completed step), committed. */
  const pending = async () => {
    const identity = runIdentity({
      workspaceId: t.workspaces.main,
      workflowId: newId(),
      snapshotId: newId(),
      userId: null,
      trigger: { body: {} },
    });
    const row = newExecutionRow(identity, 'pending', 1, t.clock.now(), null, null);
    await insertExecution(t.deps.db, row, [step(row.id, 'hook')]);
    return row;
  };
  /** A running execution held by `owner`. */
  const held = async () => {
    const row = await pending();
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'running', lease_owner: owner, lease_expires_at: '2999-01-01T00:00:00.000000Z', run_at: null })
      .where('id', '=', row.id)
      .execute();
    return row;
  };
  const step = (executionId: string, nodeId: string, status: StepRow['status'] = 'completed'): StepRow =>
    stepRow(
      { executionId, workspaceId: t.workspaces.main, loopNodeId: null, iterIndex: null, savePayloads: true },
      {
        nodeId,
        status,
        attempt: 1,
        startedAt: t.clock.now(),
        finishedAt: t.clock.now(),
        durationMs: 0,
        kind: 'set',
        output: { ok: true },
        ports: ['out'],
        now: t.clock.now(),
      },
    );
  const stepsOf = async (executionId: string) =>
    (
      await t.deps.db
        .selectFrom('execution_steps')
        .select(['node_id', 'status'])
        .where('workflow_execution_id', '=', executionId)
        .orderBy('node_id')
        .execute()
    ).map((row) => `${row.node_id}:${row.status}`);
  const statusOf = async (executionId: string) =>
    await t.deps.db.selectFrom('executions').select(['status', 'output']).where('id', '=', executionId).executeTakeFirstOrThrow();
  /** A run's final commit as the engine writes it: the execution (lease-checked) and its last step. */
  const finish = (executionId: string, nodeId: string) => async (trx: Parameters<Parameters<WriteBatcher['write']>[0]>[0]) => {
    if (
      !(await updateHeldExecution(trx, executionId, owner, 30_000, {
        status: 'completed',
        output: '{"done":true}',
        finished_at: t.clock.now(),
        updated_at: t.clock.now(),
      }))
    )
      throw new LeaseLostError(executionId);
    await insertStep(trx, step(executionId, nodeId));
  };

  it('commits the rows, updates and notifications of several runs together, each notification once and in order', async () => {
    const [a, b] = [await held(), await held()];
    const heard: string[] = [];
    const stop = await t.database.notifier!.listen('sy_test_group', (payload) => heard.push(payload));
    const commits = batcher();
    await Promise.all([
      commits.write(
        async (trx) => {
          await finish(a.id, 'last')(trx);
          await t.database.notifier!.notify(trx, 'sy_test_group', 'first');
        },
        [a.id],
      ),
      commits.write(
        async (trx) => {
          await finish(b.id, 'last')(trx);
          await t.database.notifier!.notify(trx, 'sy_test_group', 'second');
          await t.database.notifier!.notify(trx, 'sy_test_group', 'first');
        },
        [b.id],
      ),
    ]);
    expect(commits.commits).toBe(1);
    for (const row of [a, b]) {
      expect(await statusOf(row.id)).toEqual({ status: 'completed', output: '{"done":true}' });
      expect(await stepsOf(row.id)).toEqual(['hook:completed', 'last:completed']);
    }
    expect(await t.database.notifier!.sync()).toBe(true);
    expect(heard).toEqual(['first', 'second']);
    stop();
  });

  it('fails only the run whose lease was lost, in a commit sent as one statement: nothing of it lands', async () => {
    const [kept, lost] = [await held(), await held()];
    await t.deps.db.updateTable('executions').set({ lease_owner: 'another-worker' }).where('id', '=', lost.id).execute();
    const commits = batcher();
    const results = await Promise.allSettled([
      commits.write(finish(kept.id, 'last'), [kept.id]),
      commits.write(finish(lost.id, 'last'), [lost.id]),
    ]);
    expect(results[0].status).toBe('fulfilled');
    expect(results[1].status).toBe('rejected');
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(((results[1] as PromiseRejectedResult).reason as LeaseLostError).executionId).toBe(lost.id);
    expect((await statusOf(kept.id)).status).toBe('completed');
    expect(await stepsOf(kept.id)).toEqual(['hook:completed', 'last:completed']);
    expect((await statusOf(lost.id)).status).toBe('running');
    expect(await stepsOf(lost.id)).toEqual(['hook:completed']);
  });

  it('fails only the run whose lease was lost in a transaction too (a write that runs statements of its own)', async () => {
    const [kept, lost] = [await held(), await held()];
    await t.deps.db.updateTable('executions').set({ lease_owner: 'another-worker' }).where('id', '=', lost.id).execute();
    const commits = batcher();
    const withStatement = (executionId: string) => async (trx: Parameters<Parameters<WriteBatcher['write']>[0]>[0]) => {
      await sql`select 1`.execute(trx);
      await finish(executionId, 'last')(trx);
    };
    const results = await Promise.allSettled([
      commits.write(withStatement(kept.id), [kept.id]),
      commits.write(withStatement(lost.id), [lost.id]),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(await stepsOf(kept.id)).toEqual(['hook:completed', 'last:completed']);
    expect(await stepsOf(lost.id)).toEqual(['hook:completed']);
  });

  it('runs a write again in a transaction when it ran a statement, even one that swallowed the refusal', async () => {
    const row = await held();
    const commits = batcher();
    await commits.write(
      async (trx) => {
        try {
          await trx.updateTable('executions').set({ context: '{"touched":true}' }).where('id', '=', row.id).execute();
        } catch {
          // A write that hides errors from its own statements must not lose them.
        }
        await finish(row.id, 'last')(trx);
      },
      [row.id],
    );
    expect((await t.deps.db.selectFrom('executions').select('context').where('id', '=', row.id).executeTakeFirstOrThrow()).context).toBe(
      '{"touched":true}',
    );
    expect(await stepsOf(row.id)).toEqual(['hook:completed', 'last:completed']);
  });

  it('never sends a gathered update from the buffering stand-in: a write that fails after one was flushed leaves nothing', async () => {
    const row = await held();
    const before = (await t.deps.db.selectFrom('executions').select('context').where('id', '=', row.id).executeTakeFirstOrThrow()).context;
    const results = await Promise.allSettled([
      batcher().write(
        async (trx) => {
          await updateHeldExecution(trx, row.id, owner, 30_000, { context: '{"first":true}' });
          // The same execution again: the first update is flushed before this one is gathered.
          await updateHeldExecution(trx, row.id, owner, 30_000, { context: '{"second":true}' });
          throw new Error('the write fails after its updates');
        },
        [row.id],
      ),
    ]);
    expect(results[0].status).toBe('rejected');
    expect(((results[0] as PromiseRejectedResult).reason as Error).message).toBe('the write fails after its updates');
    expect((await t.deps.db.selectFrom('executions').select('context').where('id', '=', row.id).executeTakeFirstOrThrow()).context).toBe(
      before,
    );
  });

  it('sends buffered rows before a statement of the same transaction reads or changes them', async () => {
    const row = await held();
    const first = step(row.id, 'middle', 'running');
    await batcher().write(
      async (trx) => {
        await insertStep(trx, first);
        // The step inserted above, still buffered, is what this update changes.
        await updateStep(trx, first.id, { status: 'completed', updated_at: t.clock.now() });
      },
      [row.id],
    );
    expect(await stepsOf(row.id)).toEqual(['hook:completed', 'middle:completed']);
  });

  it('writes nothing of a batch sent as one statement when one of its rows is refused, and the others land alone', async () => {
    const existing = await pending();
    const fresh = runIdentity({ workspaceId: t.workspaces.main, workflowId: newId(), snapshotId: newId(), userId: null, trigger: {} });
    const freshRow = newExecutionRow(fresh, 'pending', 1, t.clock.now(), null, null);
    const commits = batcher();
    const results = await Promise.allSettled([
      commits.write((trx) => insertExecution(trx, freshRow, [step(freshRow.id, 'hook')])),
      // The same id again: the primary key refuses it.
      commits.write((trx) => insertExecution(trx, { ...existing }, [])),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
    expect(await stepsOf(freshRow.id)).toEqual(['hook:completed']);
  });

  it('claims the executions of a lost lease first, then due ones oldest first, with the new ones’ step rows', async () => {
    const workflowId = newId();
    const make = async (at: string) => {
      const identity = runIdentity({ workspaceId: t.workspaces.main, workflowId, snapshotId: newId(), userId: null, trigger: {} });
      const row = newExecutionRow(identity, 'pending', 1, at, null, null);
      await insertExecution(t.deps.db, row, [step(row.id, 'hook')]);
      return row;
    };
    const older = await make('2000-01-01T00:00:00.000001Z');
    const newer = await make('2000-01-01T00:00:00.000002Z');
    const orphan = await make('2000-01-01T00:00:00.000003Z');
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'running', lease_owner: 'dead-worker', lease_expires_at: '2000-01-01T00:00:00.000000Z', run_at: null })
      .where('id', '=', orphan.id)
      .execute();
    const claim = await claimExecutions(t.deps.db, { owner, nowIso: t.clock.now(), capacity: 64, maxRunning: 1_000, leaseMs: 30_000 });
    const ours = claim.claimed.filter((entry) => entry.row.workflow_id === workflowId);
    expect(ours.map((entry) => [entry.row.id, entry.takeover, entry.was])).toEqual([
      [orphan.id, true, 'running'],
      [older.id, false, 'pending'],
      [newer.id, false, 'pending'],
    ]);
    expect(ours[0]!.steps).toBeNull();
    expect(ours[1]!.steps!.map((row) => row.node_id)).toEqual(['hook']);
    expect(ours.every((entry) => entry.row.status === 'running' && entry.row.lease_owner === owner)).toBe(true);
  });

  it('claims no more than a workflow’s concurrency limit allows, and says it held some back', async () => {
    const workflowId = newId();
    for (let i = 0; i < 3; i += 1) {
      const identity = runIdentity({ workspaceId: t.workspaces.main, workflowId, snapshotId: newId(), userId: null, trigger: {} });
      await insertExecution(t.deps.db, newExecutionRow(identity, 'pending', 0, t.clock.now(), 2, null), []);
    }
    const first = await claimExecutions(t.deps.db, { owner, nowIso: t.clock.now(), capacity: 64, maxRunning: 1_000, leaseMs: 30_000 });
    expect(first.claimed.filter((entry) => entry.row.workflow_id === workflowId)).toHaveLength(2);
    expect(first.heldBack).toBe(true);
    const second = await claimExecutions(t.deps.db, {
      owner: newId(),
      nowIso: t.clock.now(),
      capacity: 64,
      maxRunning: 1_000,
      leaseMs: 30_000,
    });
    expect(second.claimed.filter((entry) => entry.row.workflow_id === workflowId)).toHaveLength(0);
  });
});
