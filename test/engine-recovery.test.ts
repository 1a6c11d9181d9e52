import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, stepRows, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * A run whose commit fails is taken up again after a pause (src/engine/run-recovery.ts): by the
 * single process on SQLite, and on PostgreSQL by the worker whose lease it still is (here the
 * only worker, which would never take over its own expired lease).
 */
describeEachDialect('a run whose commit fails', (dialect) => {
  let t: TestApp;
  const errors: unknown[] = [];
  beforeAll(async () => {
    t = await createTestApp(dialect, { onBackgroundError: (error) => errors.push(error) });
  });
  afterAll(() => t.close());

  it('is taken up again from its last commit and completes, each step completed once', async () => {
    const id = await workflowWith(t, 'Recovered', {
      nodes: [
        node('hook', 'webhook'),
        node('first', 'code', { code: 'return { n: 1 };' }),
        node('second', 'code', { code: 'return { n: input.n + 1 };' }),
      ],
      edges: [edge('hook', 'first'), edge('first', 'second')],
    });
    // The run's first commit after the one that created the execution fails, as a database
    // busy past its timeout would make it.
    const batcher = t.deps.engine.batcher;
    const write = batcher.write.bind(batcher);
    let writes = 0;
    batcher.write = (...args: Parameters<typeof write>) => {
      writes += 1;
      if (writes === 2) return Promise.reject(new Error('database is locked'));
      return write(...args);
    };
    try {
      const res = await t.request('POST', `/api/v1/workflows/${id}/run`, { body: { data: { draft: true } } });
      expect(res.status).toBe(202);
      const executionId = res.body.execution_id as string;
      await t.deps.engine.idle();
      expect((await executionRow(t, executionId)).status).toBe('running');
      expect(errors.map(String)).toContain('Error: database is locked');

      const deadline = Date.now() + 15_000;
      while ((await executionRow(t, executionId)).status === 'running' && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      await t.deps.engine.idle();
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('completed');
      expect(JSON.parse(execution.output!)).toEqual({ n: 2 });
      const steps = await stepRows(t, executionId);
      expect(steps.map((s) => [s.node_id, s.status, s.attempt])).toEqual([
        ['hook', 'completed', 1],
        ['first', 'completed', 1],
        ['second', 'completed', 1],
      ]);
    } finally {
      batcher.write = write;
    }
  });

  if (dialect === 'postgres')
    it('leaves an execution whose lease another worker took over to that worker', async () => {
      const id = await workflowWith(t, 'Taken over', {
        nodes: [node('hook', 'webhook'), node('first', 'code', { code: 'return { n: 1 };' })],
        edges: [edge('hook', 'first')],
      });
      const batcher = t.deps.engine.batcher;
      const write = batcher.write.bind(batcher);
      let writes = 0;
      let executionId = '';
      batcher.write = async (...args: Parameters<typeof write>) => {
        writes += 1;
        if (writes !== 2) return write(...args);
        // Another worker's claim takes the lease before this worker's commit fails.
        await t.deps.db.updateTable('executions').set({ lease_owner: 'another-worker' }).where('id', '=', executionId).execute();
        throw new Error('database is locked');
      };
      try {
        const res = await t.request('POST', `/api/v1/workflows/${id}/run`, { body: { data: { draft: true } } });
        executionId = res.body.execution_id as string;
        const deadline = Date.now() + 10_000;
        while (writes < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        await t.deps.engine.idle();
        // Past the first pause: this worker looked, found the lease not its own, and ran nothing
        // (a run would have tried a commit, which the lease check then refuses).
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await t.deps.engine.idle();
        expect(writes).toBe(2);
        const execution = await executionRow(t, executionId);
        expect(execution).toMatchObject({ status: 'running', lease_owner: 'another-worker' });
        expect((await stepRows(t, executionId)).map((s) => s.node_id)).toEqual(['hook']);
      } finally {
        batcher.write = write;
      }
    });
});
