import { afterAll, beforeAll, expect, it } from 'vitest';
import { directWrites } from '../src/db/direct-writes.js';
import {
  insertExecution,
  insertStep,
  listSteps,
  findExecution,
  updateExecution,
  updateStep,
  type ExecutionRow,
} from '../src/engine/execution-store.js';
import { newExecutionRow, runIdentity } from '../src/engine/run/execution-start.js';
import { stepRow } from '../src/engine/commit/step-rows.js';
import { manualClock } from '../src/lib/clock.js';
import { IdentityService } from '../src/services/identity/identity-service.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from './support/dialects.js';

// The engine's row writes take a plain-statement path inside transactions on SQLite
// (db/direct-writes.ts) and the query builder elsewhere: both must store the same rows, honour
// the status condition, and count their writes for the in-process caches.
describeEachDialect('engine row writes', (dialect) => {
  let database: TestDatabase;
  let workspaceId: string;
  const clock = manualClock('2026-03-01T10:00:00.000000Z');

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    workspaceId = (await new IdentityService(database.db, clock).createWorkspace({ name: 'Rows', slug: 'rows' })).id;
  });
  afterAll(() => database.close());

  const execution = (): ExecutionRow =>
    newExecutionRow(
      runIdentity({
        workspaceId,
        workflowId: 'wf-1',
        snapshotId: 'snap-1',
        userId: null,
        trigger: { method: 'POST', headers: {}, query: {}, body: { n: 1 } },
      }),
      'running',
      1,
      clock.now(),
      null,
      null,
    );
  const step = (executionId: string, nodeId: string) =>
    stepRow(
      { executionId, workspaceId, loopNodeId: null, iterIndex: null, savePayloads: true },
      {
        nodeId,
        status: 'completed',
        attempt: 1,
        startedAt: clock.now(),
        finishedAt: clock.now(),
        durationMs: 0,
        kind: 'set',
        output: { nodeId },
        ports: ['out'],
        now: clock.now(),
      },
    );

  it(`uses the direct path only inside a transaction ${dialect === 'sqlite' ? 'on SQLite' : 'nowhere on PostgreSQL'}`, async () => {
    expect(directWrites(database.db)).toBeNull();
    await database.db.transaction().execute(async (trx) => {
      expect(directWrites(trx) !== null).toBe(dialect === 'sqlite');
    });
  });

  it('stores the same rows inside a transaction as outside one', async () => {
    const inside = execution();
    const outside = execution();
    await database.db.transaction().execute(async (trx) => {
      await insertExecution(trx, inside, [step(inside.id, 'hook')]);
      await insertStep(trx, step(inside.id, 'next'));
    });
    await insertExecution(database.db, outside, [step(outside.id, 'hook')]);
    await insertStep(database.db, step(outside.id, 'next'));

    for (const row of [inside, outside]) {
      expect(await findExecution(database.db, row.id)).toEqual(row);
      const steps = await listSteps(database.db, row.id);
      expect(steps.map((s) => [s.node_id, JSON.parse(s.output!), s.ports, s.output_bytes])).toEqual([
        ['hook', { nodeId: 'hook' }, '["out"]', 17],
        ['next', { nodeId: 'next' }, '["out"]', 17],
      ]);
    }
  });

  it('updates an execution only while its status is one of those named, and a step by id', async () => {
    const row = execution();
    await insertExecution(database.db, row, [step(row.id, 'hook')]);
    const [hook] = await listSteps(database.db, row.id);
    const finishedAt = clock.now();
    await database.db.transaction().execute(async (trx) => {
      expect(
        await updateExecution(trx, row.id, { status: 'completed', finished_at: finishedAt, output: '{"ok":true}' }, [
          'pending',
          'running',
          'waiting',
        ]),
      ).toBe(true);
      // Already ended: a second conditional update changes nothing.
      expect(await updateExecution(trx, row.id, { status: 'cancelled' }, ['pending', 'running', 'waiting'])).toBe(false);
      // Undefined values are left out, as the query builder does.
      await updateStep(trx, hook!.id, { status: 'failed', error: '{"code":"x"}', provider: undefined });
    });
    expect(await findExecution(database.db, row.id)).toMatchObject({ status: 'completed', finished_at: finishedAt, output: '{"ok":true}' });
    expect((await listSteps(database.db, row.id))[0]).toMatchObject({
      status: 'failed',
      error: '{"code":"x"}',
      provider: null,
      node_id: 'hook',
    });
  });

  it('counts its writes per table, so caches of those tables notice them', async () => {
    const before = {
      executions: database.writes.version(['executions']),
      steps: database.writes.version(['execution_steps']),
      other: database.writes.version(['workflows']),
    };
    const row = execution();
    await database.db.transaction().execute(async (trx) => {
      await insertExecution(trx, row, [step(row.id, 'hook')]);
      await updateExecution(trx, row.id, { updated_at: clock.now() });
    });
    expect(database.writes.version(['executions'])).toBe(before.executions + 2);
    expect(database.writes.version(['execution_steps'])).toBe(before.steps + 1);
    expect(database.writes.version(['workflows'])).toBe(before.other);
  });

  it('leaves nothing behind when the transaction fails', async () => {
    const row = execution();
    await expect(
      database.db.transaction().execute(async (trx) => {
        await insertExecution(trx, row, [step(row.id, 'hook')]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await findExecution(database.db, row.id)).toBeUndefined();
    expect(await listSteps(database.db, row.id)).toEqual([]);
  });
});
