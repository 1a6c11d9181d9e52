import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, MAX_CALL_DEPTH } from '../src/engine/engine.js';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** A parent: hook -> call (call_workflow) -> after, where after wraps what the call passed on. */
function parentGraph(config: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    nodes: [
      node('hook', 'webhook'),
      node('call', 'call_workflow', config, extra),
      node('after', 'set', { values: { got: '{{ input }}' } }),
    ],
    edges: [edge('hook', 'call'), edge('call', 'after')],
  };
}

/** A child: hook -> answer, answering with what it was called with. */
const childGraph = {
  nodes: [
    node('hook', 'webhook'),
    node('answer', 'set', { values: { doubled: '{{ trigger.body.n * 2 }}', method: '{{ trigger.method }}' } }),
  ],
  edges: [edge('hook', 'answer')],
};

describeEachDialect('call_workflow step', (dialect) => {
  let t: TestApp;
  let childId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    childId = await workflowWith(t, 'Child', childGraph, { activate: true });
  });
  afterAll(async () => {
    await t.close();
  });

  const childrenOf = (parentId: string) =>
    t.deps.db.selectFrom('executions').selectAll().where('parent_execution_id', '=', parentId).orderBy('inserted_at').execute();

  describe('waiting for the child', () => {
    it('runs the child’s pinned snapshot with the input, waits, and passes its output on', async () => {
      const parent = await workflowWith(t, 'Parent', parentGraph({ workflow_id: childId, input: '{{ trigger.body }}' }), {
        activate: true,
      });
      const executionId = await runToRest(t, parent, { input: { n: 21 } });
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('completed');
      expect(JSON.parse(execution.output!)).toEqual({ got: { doubled: 42, method: 'CALL' } });

      const [child] = await childrenOf(executionId);
      const call = (await stepRows(t, executionId)).find((s) => s.node_id === 'call')!;
      expect(child).toMatchObject({ workflow_id: childId, status: 'completed', triggered_by_step_id: call.id, call_depth: 1 });
      expect(JSON.parse(child!.inputs!)).toEqual({ method: 'CALL', headers: {}, query: {}, body: { n: 21 } });
      expect(call).toMatchObject({
        status: 'completed',
        kind: 'call_workflow',
        awaiting_workflow_execution_id: child!.id,
        output: { doubled: 42, method: 'CALL' },
        attempt: 1,
      });
      // The step's time spans the child's whole run.
      expect(call.started_at! <= child!.started_at!).toBe(true);
      expect(call.finished_at! >= child!.finished_at!).toBe(true);
    });

    it('fails the call step with the child’s error when the child fails', async () => {
      const failing = await workflowWith(
        t,
        'Failing child',
        {
          nodes: [node('hook', 'webhook'), node('boom', 'code', { code: 'throw new Error("child broke")' })],
          edges: [edge('hook', 'boom')],
        },
        { activate: true },
      );
      const executionId = await runToRest(
        t,
        await workflowWith(t, 'Parent of failure', parentGraph({ workflow_id: failing }), { activate: true }),
        {},
      );
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('failed');
      const [child] = await childrenOf(executionId);
      const error = JSON.parse(execution.error!);
      expect(error).toMatchObject({ code: 'child_failed', node_id: 'call', details: { execution_id: child!.id } });
      expect(error.message).toContain('child broke');
      expect(child!.status).toBe('failed');
    });

    it('resumes a parent whose awaited child ended, even when the child waited first', async () => {
      const slow = await workflowWith(
        t,
        'Slow child',
        {
          nodes: [
            node('hook', 'webhook'),
            node('pause', 'wait', { duration_ms: 60_000 }),
            node('done', 'set', { values: { slept: true } }),
          ],
          edges: [edge('hook', 'pause'), edge('pause', 'done')],
        },
        { activate: true },
      );
      const executionId = await runToRest(
        t,
        await workflowWith(t, 'Patient parent', parentGraph({ workflow_id: slow }), { activate: true }),
        {},
      );
      expect((await executionRow(t, executionId)).status).toBe('waiting');
      const call = (await stepRows(t, executionId)).find((s) => s.node_id === 'call')!;
      expect(call).toMatchObject({ status: 'waiting', resume_at: null });
      expect((await executionRow(t, executionId)).run_at).toBeNull();
      t.clock.advance(60_000);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('completed');
      expect(JSON.parse(execution.output!)).toEqual({ got: { slept: true } });
      expect((await stepRows(t, executionId)).filter((s) => s.node_id === 'call').map((s) => [s.id, s.status])).toEqual([
        [call.id, 'completed'],
      ]);
    });

    it('writes the waiting status of a parent whose child takes long, without anyone asking', async () => {
      const slow = await workflowWith(
        t,
        'Long child',
        { nodes: [node('hook', 'webhook'), node('pause', 'wait', { duration_ms: 60_000 })], edges: [edge('hook', 'pause')] },
        { activate: true },
      );
      const parentId = await workflowWith(t, 'Deferred parent', parentGraph({ workflow_id: slow }), { activate: true });
      const started = await t.request('POST', `/api/v1/workflows/${parentId}/run`, { body: { data: {} } });
      let status = '';
      for (let i = 0; i < 100 && status !== 'waiting'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        status = (await executionRow(t, started.body.execution_id)).status;
      }
      expect(status).toBe('waiting');
      await t.deps.engine.idle();
    });

    it('cancelling the parent cancels the child it awaits', async () => {
      const slow = await workflowWith(
        t,
        'Sleepy child',
        { nodes: [node('hook', 'webhook'), node('pause', 'wait', { duration_ms: 60_000 })], edges: [edge('hook', 'pause')] },
        { activate: true },
      );
      const executionId = await runToRest(
        t,
        await workflowWith(t, 'Cancelled parent', parentGraph({ workflow_id: slow }), { activate: true }),
        {},
      );
      const [child] = await childrenOf(executionId);
      expect(child!.status).toBe('waiting');
      expect((await t.request('POST', `/api/v1/executions/${executionId}/cancel`)).status).toBe(200);
      await t.deps.engine.idle();
      expect((await executionRow(t, child!.id)).status).toBe('cancelled');
      expect((await executionRow(t, executionId)).status).toBe('cancelled');
    });

    it('calls again with the same child id when the child was never committed (a crash between the two writes)', async () => {
      const parent = await workflowWith(t, 'Crash parent', parentGraph({ workflow_id: childId, input: { n: 5 } }), { activate: true });
      const executionId = await runToRest(t, parent, {});
      const [child] = await childrenOf(executionId);
      const call = (await stepRows(t, executionId)).find((s) => s.node_id === 'call')!;
      // Rewind: the parent's waiting call row was committed, the child was not, the process died.
      await t.deps.db.deleteFrom('executions').where('id', '=', child!.id).execute();
      await t.deps.db
        .deleteFrom('execution_steps')
        .where(
          'id',
          'in',
          (await stepRows(t, executionId)).filter((s) => s.node_id === 'after').map((s) => s.id),
        )
        .execute();
      await t.deps.db
        .updateTable('execution_steps')
        .set({ status: 'waiting', finished_at: null, output: null })
        .where('id', '=', call.id)
        .execute();
      await t.deps.db
        .updateTable('executions')
        .set({ status: 'running', finished_at: null, output: null, lease_owner: null, lease_expires_at: null })
        .where('id', '=', executionId)
        .execute();
      await t.deps.engine.start();
      await t.deps.engine.idle();
      expect((await executionRow(t, executionId)).status).toBe('completed');
      const again = await childrenOf(executionId);
      expect(again.map((c) => [c.id, c.status, c.triggered_by_step_id])).toEqual([[child!.id, 'completed', call.id]]);
    });
  });

  describe('capacity', () => {
    it('resumes a parent whose child ended while the engine had no free slot', async () => {
      const engine = new Engine({
        db: t.deps.db,
        clock: t.clock,
        settings: { httpAllow: [] },
        maxConcurrent: 1,
        timers: false,
        resolveCallTarget: (request) => t.deps.executions.resolveCallTarget(request),
      });
      const parentId = await workflowWith(t, 'One slot parent', parentGraph({ workflow_id: childId, input: { n: 4 } }), { activate: true });
      const snapshot = (
        await t.deps.db.selectFrom('workflows').select('active_snapshot_id').where('id', '=', parentId).executeTakeFirstOrThrow()
      ).active_snapshot_id!;
      const started = await engine.run({
        workspaceId: t.workspaces.main,
        workflowId: parentId,
        snapshotId: snapshot,
        userId: null,
        trigger: { method: 'RUN', headers: {}, query: {}, body: null },
      });
      const done = (async () => {
        for (let i = 0; i < 200; i++) {
          if ((await executionRow(t, started.execution_id)).status === 'completed') return true;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return false;
      })();
      // No idle(): it would write deferred waits, the path this test must do without.
      expect(await done).toBe(true);
      expect(JSON.parse((await executionRow(t, started.execution_id)).output!)).toEqual({ got: { doubled: 8, method: 'CALL' } });
      await engine.stop();
    });
  });

  describe('fire and forget', () => {
    it('passes on the child’s execution id at once and the child runs on its own', async () => {
      const executionId = await runToRest(
        t,
        await workflowWith(t, 'Launcher', parentGraph({ workflow_id: childId, input: { n: 1 }, wait: false }), { activate: true }),
        {},
      );
      const [child] = await childrenOf(executionId);
      const execution = await executionRow(t, executionId);
      expect(JSON.parse(execution.output!)).toEqual({ got: { execution_id: child!.id } });
      const call = (await stepRows(t, executionId)).find((s) => s.node_id === 'call')!;
      expect(call).toMatchObject({ status: 'completed', awaiting_workflow_execution_id: null });
      expect(child).toMatchObject({ status: 'completed', triggered_by_step_id: call.id });
    });
  });

  describe('targets', () => {
    it('fails when the target is inactive, unless the caller is a draft run, which calls its live canvas', async () => {
      const inactive = await workflowWith(t, 'Inactive child', childGraph);
      const parent = await workflowWith(t, 'Caller', parentGraph({ workflow_id: inactive, input: { n: 2 } }), { activate: true });
      const pinned = await executionRow(t, await runToRest(t, parent, {}));
      expect(pinned.status).toBe('failed');
      expect(JSON.parse(pinned.error!)).toMatchObject({ code: 'workflow_inactive', retryable: false, node_id: 'call' });
      const draft = await executionRow(t, await runToRest(t, parent, { draft: true }));
      expect(draft.status).toBe('completed');
      expect(JSON.parse(draft.output!)).toEqual({ got: { doubled: 4, method: 'CALL' } });
    });

    it('answers a workflow of another workspace exactly like an unknown one', async () => {
      const foreign = await t.request('POST', '/api/v1/workflows', { token: t.tokens.other, body: { data: { name: 'Theirs' } } });
      const executions = await Promise.all(
        [foreign.body.data.id, '01a2038b-0000-7000-8000-000000000000'].map(async (target) =>
          executionRow(
            t,
            await runToRest(t, await workflowWith(t, `Reach ${target}`, parentGraph({ workflow_id: target })), { draft: true }),
          ),
        ),
      );
      const errors = executions.map((e) => JSON.parse(e.error!));
      expect(errors.map((e) => e.code)).toEqual(['workflow_not_found', 'workflow_not_found']);
      expect(errors[0].message.replace(foreign.body.data.id, 'X')).toBe(
        errors[1].message.replace('01a2038b-0000-7000-8000-000000000000', 'X'),
      );
    });

    it(`stops runaway recursion at depth ${MAX_CALL_DEPTH} with a clear error`, async () => {
      const id = await workflowWith(t, 'Recursive', { nodes: [node('hook', 'webhook')], edges: [] });
      await t.request('PUT', `/api/v1/workflows/${id}/graph`, {
        body: { data: { graph: parentGraph({ workflow_id: id }), layout: false } },
      });
      const executionId = await runToRest(t, id, { draft: true });
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('failed');
      const chain = await t.deps.db
        .selectFrom('executions')
        .select(['call_depth', 'status', 'error'])
        .where('workflow_id', '=', id)
        .orderBy('call_depth')
        .execute();
      expect(chain.map((c) => c.call_depth)).toEqual(Array.from({ length: MAX_CALL_DEPTH + 1 }, (_, i) => i));
      const deepest = JSON.parse(chain.at(-1)!.error!);
      expect(deepest).toMatchObject({ code: 'call_depth_exceeded', retryable: false });
      expect(chain.every((c) => c.status === 'failed')).toBe(true);
    });
  });
});
