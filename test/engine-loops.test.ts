import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** hook -> each (loop over trigger.body.list) -body-> `body nodes` ; each -done-> after */
function loopGraph(bodyNodes: ReturnType<typeof node>[], bodyEdges: ReturnType<typeof edge>[], items: unknown = '{{ trigger.body.list }}') {
  return {
    nodes: [
      node('hook', 'webhook'),
      node('each', 'loop', { items }),
      ...bodyNodes,
      node('after', 'set', { values: { results: '{{ input }}' } }),
    ],
    edges: [edge('hook', 'each'), ...bodyEdges, edge('each', 'after', 'done')],
  };
}

describeEachDialect('loop step', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('iterations', () => {
    it('runs the body once per item with item and index, tags its rows, and collects the results on done', async () => {
      const graph = loopGraph(
        [node('double', 'set', { values: { v: '{{ item * 2 }}', i: '{{ index }}', got: '{{ input }}' } })],
        [edge('each', 'double', 'body')],
      );
      const executionId = await runToRest(t, await workflowWith(t, 'Loop', graph), { draft: true, input: { list: [1, 2, 3] } });
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('completed');
      const expected = [
        { v: 2, i: 0, got: 1 },
        { v: 4, i: 1, got: 2 },
        { v: 6, i: 2, got: 3 },
      ];
      expect(JSON.parse(execution.output!)).toEqual({ results: expected });
      const rows = await stepRows(t, executionId);
      expect(rows.map((s) => [s.node_id, s.status, s.iter_index, s.loop_node_id])).toEqual([
        ['hook', 'completed', null, null],
        ['double', 'completed', 0, 'each'],
        ['double', 'completed', 1, 'each'],
        ['double', 'completed', 2, 'each'],
        ['each', 'completed', null, null],
        ['after', 'completed', null, null],
      ]);
      const loopRow = rows.find((s) => s.node_id === 'each')!;
      expect(loopRow).toMatchObject({
        kind: 'loop',
        output: expected,
        input: { method: 'RUN', headers: {}, query: {}, body: { list: [1, 2, 3] } },
      });
      expect(JSON.parse(loopRow.ports!)).toEqual(['done']);
      expect(execution.step_count).toBe(rows.length);
    });

    it('runs a branching body per item, recording the untaken branch skipped in that iteration, and the last node’s output is the result', async () => {
      const graph = loopGraph(
        [
          node('big', 'if', { condition: '{{ item > 1 }}' }),
          node('yes', 'set', { values: { big: '{{ item }}' } }),
          node('no', 'set', { values: { small: '{{ item }}' } }),
        ],
        [edge('each', 'big', 'body'), edge('big', 'yes', 'true'), edge('big', 'no', 'false')],
      );
      const executionId = await runToRest(t, await workflowWith(t, 'Branching loop', graph), { draft: true, input: { list: [1, 5] } });
      expect(JSON.parse((await executionRow(t, executionId)).output!)).toEqual({ results: [{ small: 1 }, { big: 5 }] });
      const body = (await stepRows(t, executionId)).filter((s) => s.loop_node_id === 'each');
      expect(body.map((s) => [s.node_id, s.status, s.iter_index])).toEqual([
        ['big', 'completed', 0],
        ['yes', 'skipped', 0],
        ['no', 'completed', 0],
        ['big', 'completed', 1],
        ['no', 'skipped', 1],
        ['yes', 'completed', 1],
      ]);
    });

    it('passes an empty list straight to done without running the body', async () => {
      const graph = loopGraph([node('double', 'set', { values: { v: '{{ item }}' } })], [edge('each', 'double', 'body')]);
      const executionId = await runToRest(t, await workflowWith(t, 'Empty loop', graph), { draft: true, input: { list: [] } });
      expect(JSON.parse((await executionRow(t, executionId)).output!)).toEqual({ results: [] });
      expect((await stepRows(t, executionId)).map((s) => s.node_id)).toEqual(['hook', 'each', 'after']);
    });

    it('fails the loop step when items is not an array, naming the node', async () => {
      const graph = loopGraph([node('double', 'set', { values: { v: '{{ item }}' } })], [edge('each', 'double', 'body')]);
      const executionId = await runToRest(t, await workflowWith(t, 'Bad items', graph), { draft: true, input: { list: 'abc' } });
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('failed');
      expect(JSON.parse(execution.error!)).toMatchObject({
        code: 'invalid_loop_items',
        node_id: 'each',
        message: 'node "each": config.items must be an array, got string',
        retryable: false,
      });
    });

    it('fails the run when an iteration fails, keeping the earlier iterations’ rows and naming the iteration', async () => {
      const graph = loopGraph(
        [node('check', 'code', { code: 'if (input === 2) throw new Error("two is not allowed"); return input;' })],
        [edge('each', 'check', 'body')],
      );
      const executionId = await runToRest(t, await workflowWith(t, 'Failing loop', graph), { draft: true, input: { list: [1, 2, 3] } });
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('failed');
      const error = JSON.parse(execution.error!);
      expect(error).toMatchObject({ code: 'loop_iteration_failed', node_id: 'each', details: { iter_index: 1, node_id: 'check' } });
      expect(error.message).toContain('iteration 1 of loop "each" failed at node "check"');
      expect((await stepRows(t, executionId)).map((s) => [s.node_id, s.status, s.iter_index])).toEqual([
        ['hook', 'completed', null],
        ['check', 'completed', 0],
        ['check', 'failed', 1],
        ['each', 'failed', null],
      ]);
    });
  });

  describe('durability', () => {
    it('waits inside an iteration, then resumes that iteration and the ones after it when due', async () => {
      const graph = loopGraph(
        [node('pause', 'wait', { duration_ms: 60_000 }), node('mark', 'set', { values: { n: '{{ item }}' } })],
        [edge('each', 'pause', 'body'), edge('pause', 'mark')],
      );
      const executionId = await runToRest(t, await workflowWith(t, 'Waiting loop', graph), { draft: true, input: { list: [1, 2] } });
      expect((await executionRow(t, executionId)).status).toBe('waiting');
      expect((await stepRows(t, executionId)).map((s) => [s.node_id, s.status, s.iter_index])).toEqual([
        ['hook', 'completed', null],
        ['pause', 'waiting', 0],
      ]);
      t.clock.advance(60_000);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      expect((await executionRow(t, executionId)).status).toBe('waiting');
      t.clock.advance(60_000);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('completed');
      expect(JSON.parse(execution.output!)).toEqual({ results: [{ n: 1 }, { n: 2 }] });
      expect((await stepRows(t, executionId)).map((s) => [s.node_id, s.status, s.iter_index])).toEqual([
        ['hook', 'completed', null],
        ['pause', 'completed', 0],
        ['mark', 'completed', 0],
        ['pause', 'completed', 1],
        ['mark', 'completed', 1],
        ['each', 'completed', null],
        ['after', 'completed', null],
      ]);
    });

    it('resumes a loop after a crash from its rows: finished iterations and body steps do not run again', async () => {
      const graph = loopGraph(
        [node('a', 'set', { values: { a: '{{ item }}' } }), node('b', 'set', { values: { b: '{{ input.a }}' } })],
        [edge('each', 'a', 'body'), edge('a', 'b')],
      );
      const id = await workflowWith(t, 'Crash loop', graph, { activate: true });
      const executionId = await runToRest(t, id, { input: { list: [10, 20, 30] } });
      const before = await stepRows(t, executionId);
      // Rewind to a crash in iteration 1 after its "a" completed: its "b" was in flight.
      const lost = before.filter(
        (s) => (s.iter_index === 1 && s.node_id === 'b') || s.iter_index === 2 || s.node_id === 'each' || s.node_id === 'after',
      );
      await t.deps.db
        .deleteFrom('execution_steps')
        .where(
          'id',
          'in',
          lost.map((s) => s.id),
        )
        .execute();
      await t.deps.db
        .updateTable('executions')
        .set({ status: 'running', finished_at: null, output: null, lease_owner: null, lease_expires_at: null })
        .where('id', '=', executionId)
        .execute();
      await t.deps.engine.start();
      await t.deps.engine.idle();
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('completed');
      expect(JSON.parse(execution.output!)).toEqual({ results: [{ b: 10 }, { b: 20 }, { b: 30 }] });
      const after = await stepRows(t, executionId);
      const kept = before.filter((s) => !lost.includes(s)).map((s) => s.id);
      expect(after.filter((s) => kept.includes(s.id)).map((s) => [s.node_id, s.iter_index])).toEqual([
        ['hook', null],
        ['a', 0],
        ['b', 0],
        ['a', 1],
      ]);
      expect(after.filter((s) => !kept.includes(s.id)).map((s) => [s.node_id, s.iter_index])).toEqual([
        ['b', 1],
        ['a', 2],
        ['b', 2],
        ['each', null],
        ['after', null],
      ]);
    });
  });

  describe('graph rules', () => {
    it('refuses to activate nested loops or an edge entering a body from outside, with pointers', async () => {
      const nested = {
        nodes: [
          node('hook', 'webhook'),
          node('outer', 'loop', { items: [1] }),
          node('inner', 'loop', { items: [2] }),
          node('x', 'set', { values: {} }),
        ],
        edges: [edge('hook', 'outer'), edge('outer', 'inner', 'body'), edge('inner', 'x', 'body')],
      };
      const res = await t.request('POST', `/api/v1/workflows/${await workflowWith(t, 'Nested', nested)}/activate`);
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { code: string; source: { pointer: string } }) => [e.code, e.source.pointer])).toEqual([
        ['invalid_loop', '/data/attributes/graph/nodes/2'],
      ]);

      const entering = {
        nodes: [node('hook', 'webhook'), node('each', 'loop', { items: [1] }), node('x', 'set', { values: {} })],
        edges: [edge('hook', 'each'), edge('each', 'x', 'body'), edge('hook', 'x')],
      };
      const res2 = await t.request('POST', `/api/v1/workflows/${await workflowWith(t, 'Entering', entering)}/activate`);
      expect(res2.status).toBe(422);
      expect(res2.body.errors[0]).toMatchObject({ code: 'invalid_loop', source: { pointer: '/data/attributes/graph/edges/2' } });
      expect(res2.body.errors[0].detail).toBe(
        'The edge from "hook" enters the body of loop "each" at "x"; a loop body is entered only through the loop\'s body port.',
      );
    });
  });
});
