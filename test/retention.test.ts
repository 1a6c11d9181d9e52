import { afterAll, beforeAll, expect, it } from 'vitest';
import { RetentionPruner, pruneExecutions } from '../src/engine/retention.js';
import type { ExecutionStatus } from '../src/db/schema.js';
import { newId } from '../src/lib/ids.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describeEachDialect('execution retention', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  const insert = async (status: ExecutionStatus, finishedAt: string | null) => {
    const id = newId();
    await t.deps.db
      .insertInto('executions')
      .values({
        id,
        workspace_id: t.workspaces.main,
        workflow_id: newId(),
        workflow_snapshot_id: newId(),
        status,
        triggered_by_step_id: null,
        parent_execution_id: null,
        call_depth: 0,
        retry_of_execution_id: null,
        user_id: null,
        started_at: '2026-01-01T00:00:00.000000Z',
        finished_at: finishedAt,
        inserted_at: '2026-01-01T00:00:00.000000Z',
        updated_at: '2026-01-01T00:00:00.000000Z',
        context: null,
        inputs: null,
        output: null,
        error: null,
        step_count: 1,
        run_at: null,
        lease_owner: null,
        lease_expires_at: null,
        response: null,
      })
      .execute();
    await t.deps.db
      .insertInto('execution_steps')
      .values({
        id: newId(),
        workspace_id: t.workspaces.main,
        workflow_execution_id: id,
        node_id: 'n',
        status: 'completed',
        attempt: 1,
        workflow_step_id: null,
        awaiting_workflow_execution_id: null,
        duration_ms: 1,
        started_at: null,
        finished_at: null,
        iter_index: null,
        kind: 'set',
        loop_node_id: null,
        provider: null,
        input: null,
        output: null,
        error: null,
        logs: null,
        ports: null,
        memory_bytes: null,
        output_bytes: null,
        reductions: null,
        resume_at: null,
        inserted_at: '2026-01-01T00:00:00.000000Z',
        updated_at: '2026-01-01T00:00:00.000000Z',
      })
      .execute();
    return id;
  };
  const exists = async (id: string) =>
    (await t.deps.db.selectFrom('executions').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

  it('deletes finished executions older than the retention, with their steps, in batches, and keeps everything else', async () => {
    t.clock.set('2026-03-01T00:00:00.000000Z');
    const old = [];
    for (let i = 0; i < 7; i += 1)
      old.push(await insert(i % 3 === 0 ? 'failed' : i % 3 === 1 ? 'cancelled' : 'completed', '2026-02-01T00:00:00.000000Z'));
    const recent = await insert('completed', '2026-02-20T00:00:00.000000Z');
    const stillWaiting = await insert('waiting', null);
    const pruner = new RetentionPruner(t.deps.db, t.clock, 14);
    expect(pruner.cutoff()).toBe('2026-02-15T00:00:00.000000Z');
    expect(await pruneExecutions(t.deps.db, pruner.cutoff(), { batchSize: 3 })).toBe(7);
    for (const id of old) expect(await exists(id)).toBe(false);
    expect(await exists(recent)).toBe(true);
    expect(await exists(stillWaiting)).toBe(true);
    const orphanSteps = await t.deps.db.selectFrom('execution_steps').select('id').where('workflow_execution_id', 'in', old).execute();
    expect(orphanSteps).toEqual([]);
    expect(await pruner.runOnce()).toBe(0);
  });
});
