import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { Engine } from '../src/engine/engine.js';

describeEachDialect('execution engine', (dialect) => {
  let t: TestApp;
  let server: http.Server;
  let base: string;
  const hits = new Map<string, number>();
  beforeAll(async () => {
    t = await createTestApp(dialect);
    // A flaky dependency: /flaky/<key>/<n> fails with 500 until it has been called n times.
    server = http.createServer((req, res) => {
      if (req.url === '/hang') return; // never answers: a step in flight until aborted
      const [, , key, n] = (req.url ?? '').split('/');
      const count = (hits.get(key!) ?? 0) + 1;
      hits.set(key!, count);
      if (count < Number(n)) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"try again"}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, count }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await t.close();
  });

  describe('runs', () => {
    it('refuses to run an inactive workflow without draft, and runs its canvas with draft: true', async () => {
      const id = await workflowWith(t, 'Draft run', {
        nodes: [node('hook', 'webhook'), node('shape', 'set', { values: { got: '{{ trigger.body.n }}' } })],
        edges: [edge('hook', 'shape')],
      });
      const refused = await t.request('POST', `/api/v1/workflows/${id}/run`, { body: { data: { input: { n: 1 } } } });
      expect(refused.status).toBe(422);
      const res = await t.request('POST', `/api/v1/workflows/${id}/run`, { body: { data: { draft: true, input: { n: 41 } } } });
      expect(res.status).toBe(202);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      // On PostgreSQL a new execution is committed pending and a worker claims it (docs/deploy.md).
      expect(res.body).toEqual({ execution_id: expect.any(String), status: dialect === 'sqlite' ? 'running' : 'pending' });
      await t.deps.engine.idle();
      const execution = await executionRow(t, res.body.execution_id);
      expect(execution.status).toBe('completed');
      expect(JSON.parse(execution.output!)).toEqual({ got: 41 });
      expect(JSON.parse(execution.inputs!)).toEqual({ method: 'RUN', headers: {}, query: {}, body: { n: 41 } });
      const steps = await stepRows(t, res.body.execution_id);
      expect(steps.map((s) => [s.node_id, s.status, s.attempt])).toEqual([
        ['hook', 'completed', 1],
        ['shape', 'completed', 1],
      ]);
      expect(steps[1]).toMatchObject({
        input: { method: 'RUN', headers: {}, query: {}, body: { n: 41 } },
        output: { got: 41 },
        kind: 'set',
      });
      expect(steps[1]!.output_bytes).toBe(JSON.stringify({ got: 41 }).length);
      expect(typeof steps[1]!.duration_ms).toBe('number');
      expect(execution.step_count).toBe(2);
    });

    it('runs an active workflow on its pinned snapshot, not the live canvas', async () => {
      const id = await workflowWith(
        t,
        'Pinned',
        { nodes: [node('hook', 'webhook'), node('v', 'set', { values: { version: 1 } })], edges: [edge('hook', 'v')] },
        { activate: true },
      );
      await t.request('PUT', `/api/v1/workflows/${id}/graph`, {
        body: {
          data: {
            graph: { nodes: [node('hook', 'webhook'), node('v', 'set', { values: { version: 2 } })], edges: [edge('hook', 'v')] },
            layout: false,
          },
        },
      });
      const pinned = await executionRow(t, await runToRest(t, id, {}));
      expect(JSON.parse(pinned.output!)).toEqual({ version: 1 });
      const draft = await executionRow(t, await runToRest(t, id, { draft: true }));
      expect(JSON.parse(draft.output!)).toEqual({ version: 2 });
      expect(draft.workflow_snapshot_id).not.toBe(pinned.workflow_snapshot_id);
    });

    it('commits pure steps together and everything before a step with effects first', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('a', 'set', { values: { a: 1 } }),
          node('b', 'set', { values: { b: 2 } }),
          node('c', 'set', { values: { c: 3 } }),
          node('call', 'http', { url: `${base}/flaky/effects/1` }),
          node('d', 'set', { values: { d: 4 } }),
        ],
        edges: [edge('hook', 'a'), edge('a', 'b'), edge('b', 'c'), edge('c', 'call'), edge('call', 'd')],
      };
      const id = await workflowWith(t, 'Effects', graph);
      await runToRest(t, id);
      const before = t.deps.engine.batcher.commits;
      const executionId = await runToRest(t, id);
      // Creation; a, b and c before the request; the request and d with the final state.
      expect(t.deps.engine.batcher.commits - before).toBe(3);
      expect((await stepRows(t, executionId)).map((s) => [s.node_id, s.status])).toEqual([
        ['hook', 'completed'],
        ['a', 'completed'],
        ['b', 'completed'],
        ['c', 'completed'],
        ['call', 'completed'],
        ['d', 'completed'],
      ]);
    });

    it('commits a 3-step execution in at most 3 transactions', async () => {
      const id = await workflowWith(t, 'Three steps', {
        nodes: [node('hook', 'webhook'), node('a', 'set', { values: { a: 1 } }), node('b', 'set', { values: { b: 2 } })],
        edges: [edge('hook', 'a'), edge('a', 'b')],
      });
      await runToRest(t, id);
      const before = t.deps.engine.batcher.commits;
      const execution = await executionRow(t, await runToRest(t, id));
      expect(execution.status).toBe('completed');
      expect(t.deps.engine.batcher.commits - before).toBeLessThanOrEqual(3);
    });
  });

  describe('dataflow', () => {
    it('takes one branch of an if and records the other branch skipped, propagating skips', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('check', 'if', { condition: '{{ trigger.body.amount > 100 }}' }),
          node('big', 'set', { values: { size: 'big' } }),
          node('small', 'set', { values: { size: 'small' } }),
          node('after_small', 'set', { values: { x: 1 } }),
        ],
        edges: [edge('hook', 'check'), edge('check', 'big', 'true'), edge('check', 'small', 'false'), edge('small', 'after_small')],
      };
      const id = await workflowWith(t, 'Branches', graph);
      const executionId = await runToRest(t, id, { draft: true, input: { amount: 500 } });
      const byNode = Object.fromEntries((await stepRows(t, executionId)).map((s) => [s.node_id, s.status]));
      expect(byNode).toEqual({ hook: 'completed', check: 'completed', big: 'completed', small: 'skipped', after_small: 'skipped' });
      expect(JSON.parse((await executionRow(t, executionId)).output!)).toEqual({ size: 'big' });
    });

    it('routes a switch by value, with default', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('route', 'switch', {
            value: '{{ trigger.body.kind }}',
            cases: [
              { port: 'refund', equals: 'refund' },
              { port: 'sale', equals: 'sale' },
            ],
          }),
          node('r', 'set', { values: { handled: 'refund' } }),
          node('s', 'set', { values: { handled: 'sale' } }),
          node('d', 'set', { values: { handled: 'other' } }),
        ],
        edges: [edge('hook', 'route'), edge('route', 'r', 'refund'), edge('route', 's', 'sale'), edge('route', 'd', 'default')],
      };
      const id = await workflowWith(t, 'Switch', graph);
      expect(JSON.parse((await executionRow(t, await runToRest(t, id, { draft: true, input: { kind: 'sale' } }))).output!)).toEqual({
        handled: 'sale',
      });
      expect(JSON.parse((await executionRow(t, await runToRest(t, id, { draft: true, input: { kind: 'gift' } }))).output!)).toEqual({
        handled: 'other',
      });
    });

    it('gives a node with two taken inputs an object keyed by source id', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('a', 'set', { values: { a: 1 } }),
          node('b', 'set', { values: { b: 2 } }),
          node('join', 'code', { code: 'return input;' }),
        ],
        edges: [edge('hook', 'a'), edge('hook', 'b'), edge('a', 'join'), edge('b', 'join')],
      };
      const executionId = await runToRest(t, await workflowWith(t, 'Join', graph));
      const join = (await stepRows(t, executionId)).find((s) => s.node_id === 'join')!;
      expect(join.output).toEqual({ a: { a: 1 }, b: { b: 2 } });
    });

    it('fails the step with a message naming the node and the config field for a bad expression', async () => {
      const executionId = await runToRest(
        t,
        await workflowWith(t, 'Bad expression', {
          nodes: [node('hook', 'webhook'), node('broken', 'set', { values: { x: '{{ nodes.( }}' } })],
          edges: [edge('hook', 'broken')],
        }),
      );
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('failed');
      const failed = (await stepRows(t, executionId)).find((s) => s.node_id === 'broken')!;
      expect(failed.status).toBe('failed');
      expect(failed.error.code).toBe('expression_error');
      expect(failed.error.message).toContain('"broken"');
      expect(failed.error.message).toContain('values.x');
      expect(JSON.parse(execution.error!).node_id).toBe('broken');
    });
  });

  describe('retries, errors and waits', () => {
    it('retries at once with backoff 0, one row per attempt', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('call', 'http', { url: `${base}/flaky/a/3` }, { retry: { max_attempts: 5, backoff_ms: 0, backoff: 'fixed' } }),
        ],
        edges: [edge('hook', 'call')],
      };
      const executionId = await runToRest(t, await workflowWith(t, 'Immediate retry', graph));
      const calls = (await stepRows(t, executionId)).filter((s) => s.node_id === 'call');
      expect(calls.map((s) => [s.attempt, s.status])).toEqual([
        [1, 'failed'],
        [2, 'failed'],
        [3, 'completed'],
      ]);
      expect(calls[0]!.error.code).toBe('http_500');
      expect((await executionRow(t, executionId)).status).toBe('completed');
    });

    it('waits between attempts with a durable waiting row carrying resume_at', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('call', 'http', { url: `${base}/flaky/b/2` }, { retry: { max_attempts: 3, backoff_ms: 60_000, backoff: 'exponential' } }),
        ],
        edges: [edge('hook', 'call')],
      };
      const executionId = await runToRest(t, await workflowWith(t, 'Delayed retry', graph));
      const waiting = await executionRow(t, executionId);
      expect(waiting.status).toBe('waiting');
      let calls = (await stepRows(t, executionId)).filter((s) => s.node_id === 'call');
      expect(calls.map((s) => [s.attempt, s.status])).toEqual([
        [1, 'failed'],
        [2, 'waiting'],
      ]);
      expect(calls[1]!.resume_at).toBe(waiting.run_at);
      t.clock.advance(59_000);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      expect((await executionRow(t, executionId)).status).toBe('waiting');
      t.clock.advance(1_001);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      expect((await executionRow(t, executionId)).status).toBe('completed');
      calls = (await stepRows(t, executionId)).filter((s) => s.node_id === 'call');
      expect(calls.map((s) => [s.attempt, s.status])).toEqual([
        [1, 'failed'],
        [2, 'completed'],
      ]);
    });

    it('fails at once on a non-retriable error despite the policy', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node(
            'bad',
            'code',
            { code: 'throw new NonRetriableError("bad input")' },
            { retry: { max_attempts: 5, backoff_ms: 0, backoff: 'fixed' } },
          ),
        ],
        edges: [edge('hook', 'bad')],
      };
      const executionId = await runToRest(t, await workflowWith(t, 'Non-retriable', graph));
      const rows = (await stepRows(t, executionId)).filter((s) => s.node_id === 'bad');
      expect(rows.map((s) => [s.attempt, s.status])).toEqual([[1, 'failed']]);
      expect(rows[0]!.error).toMatchObject({ name: 'NonRetriableError', message: 'bad input', retryable: false });
    });

    it('routes an error to the error port with on_error: continue', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('bad', 'code', { code: 'throw new Error("boom")' }, { on_error: 'continue' }),
          node('handle', 'set', { values: { recovered: '{{ input.error.message }}' } }),
        ],
        edges: [edge('hook', 'bad'), edge('bad', 'handle', 'error')],
      };
      const executionId = await runToRest(t, await workflowWith(t, 'Error port', graph));
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('completed');
      expect(JSON.parse(execution.output!)).toEqual({ recovered: 'boom' });
      expect((await stepRows(t, executionId)).find((s) => s.node_id === 'bad')!.status).toBe('failed');
    });

    it('suspends on a wait step and completes the same row when due', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('pause', 'wait', { duration_ms: 3_600_000 }),
          node('after', 'set', { values: { done: true } }),
        ],
        edges: [edge('hook', 'pause'), edge('pause', 'after')],
      };
      const executionId = await runToRest(t, await workflowWith(t, 'Wait', graph));
      expect((await executionRow(t, executionId)).status).toBe('waiting');
      const pause = (await stepRows(t, executionId)).find((s) => s.node_id === 'pause')!;
      expect(pause.status).toBe('waiting');
      t.clock.advance(3_600_000);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      expect((await executionRow(t, executionId)).status).toBe('completed');
      const rows = await stepRows(t, executionId);
      expect(rows.filter((s) => s.node_id === 'pause').map((s) => [s.id, s.status])).toEqual([[pause.id, 'completed']]);
      expect(rows.find((s) => s.node_id === 'after')!.status).toBe('completed');
    });
  });

  describe('concurrency', () => {
    it('queues executions past the engine-wide limit as pending and starts them in order', async () => {
      const limited = new Engine({
        db: t.deps.db,
        clock: t.clock,
        settings: { httpAllow: ['127.0.0.1'] },
        maxConcurrent: 1,
        timers: false,
      });
      const id = await workflowWith(
        t,
        'Limited',
        { nodes: [node('hook', 'webhook'), node('call', 'http', { url: `${base}/flaky/limit/1` })], edges: [edge('hook', 'call')] },
        { activate: true },
      );
      const workflow = await t.deps.db
        .selectFrom('workflows')
        .select(['active_snapshot_id'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const snapshot = await t.deps.db
        .selectFrom('workflow_snapshots')
        .select('graph')
        .where('id', '=', workflow.active_snapshot_id!)
        .executeTakeFirstOrThrow();
      const start = {
        workspaceId: t.workspaces.main,
        workflowId: id,
        snapshotId: workflow.active_snapshot_id!,
        graph: JSON.parse(snapshot.graph),
        userId: null,
      };
      const answers = await Promise.all(
        [1, 2, 3].map((n) => limited.run({ ...start, trigger: { method: 'RUN', headers: {}, query: {}, body: n } })),
      );
      expect(answers.map((a) => a.status)).toEqual(['running', 'pending', 'pending']);
      await limited.idle();
      const rows = await Promise.all(answers.map((a) => executionRow(t, a.execution_id)));
      expect(rows.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
      const started = rows.map((r) => r.started_at!);
      expect([...started].sort()).toEqual(started);
      await limited.stop();
    });
  });

  describe('cancellation', () => {
    it('cancels a waiting execution through the API, then refuses a second cancel with 409, and nothing runs afterwards', async () => {
      const graph = {
        nodes: [node('hook', 'webhook'), node('pause', 'wait', { duration_ms: 60_000 }), node('after', 'set', { values: { ran: true } })],
        edges: [edge('hook', 'pause'), edge('pause', 'after')],
      };
      const executionId = await runToRest(t, await workflowWith(t, 'Cancel me', graph));
      expect((await executionRow(t, executionId)).status).toBe('waiting');
      const res = await t.request('POST', `/api/v1/executions/${executionId}/cancel?fields[execution]=status,finished_at`);
      expect(res.status).toBe(200);
      expect(res.body.data.attributes.status).toBe('cancelled');
      expect(res.body.data.attributes.finished_at).not.toBeNull();
      const again = await t.request('POST', `/api/v1/executions/${executionId}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body.errors[0].code).toBe('invalid_state');
      t.clock.advance(120_000);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      expect((await executionRow(t, executionId)).status).toBe('cancelled');
      expect((await stepRows(t, executionId)).map((s) => s.node_id)).toEqual(['hook', 'pause']);
    });

    it('aborts a running step and starts no step after it', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('spin', 'http', { url: `${base}/hang`, timeout_ms: 60_000 }),
          node('after', 'set', { values: { ran: true } }),
        ],
        edges: [edge('hook', 'spin'), edge('spin', 'after')],
      };
      const id = await workflowWith(t, 'Abort me', graph);
      const started = await t.request('POST', `/api/v1/workflows/${id}/run`, { body: { data: { draft: true } } });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const res = await t.request('POST', `/api/v1/executions/${started.body.execution_id}/cancel`);
      expect(res.status).toBe(200);
      await t.deps.engine.idle();
      expect((await executionRow(t, started.body.execution_id)).status).toBe('cancelled');
      // The request in flight was recorded before it started, and ends failed with the cancellation.
      const rows = await stepRows(t, started.body.execution_id);
      expect(rows.map((s) => [s.node_id, s.status])).toEqual([
        ['hook', 'completed'],
        ['spin', 'failed'],
      ]);
      expect(rows[1]!.error).toMatchObject({ code: 'cancelled' });
    });

    it('answers 404 for another workspace’s execution, exactly as for an unknown one', async () => {
      const executionId = await runToRest(
        t,
        await workflowWith(t, 'Not yours', {
          nodes: [node('hook', 'webhook'), node('p', 'wait', { duration_ms: 60_000 })],
          edges: [edge('hook', 'p')],
        }),
      );
      const foreign = await t.request('POST', `/api/v1/executions/${executionId}/cancel`, { token: t.tokens.other });
      expect(foreign.status).toBe(404);
      expect((await executionRow(t, executionId)).status).toBe('waiting');
    });
  });

  describe('retry', () => {
    it('runs a failed execution again from its failed step as a new, linked execution', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('first', 'http', { url: `${base}/flaky/retry1/1` }),
          node('flaky', 'http', { url: `${base}/flaky/retry2/2` }),
          node('after', 'set', { values: { ok: '{{ nodes.flaky.body.ok }}' } }),
        ],
        edges: [edge('hook', 'first'), edge('first', 'flaky'), edge('flaky', 'after')],
      };
      const failedId = await runToRest(t, await workflowWith(t, 'Retry me', graph));
      expect((await executionRow(t, failedId)).status).toBe('failed');
      expect([hits.get('retry1'), hits.get('retry2')]).toEqual([1, 1]);
      const completed = await t.request('POST', `/api/v1/executions/${failedId}/retry`);
      expect(completed.status).toBe(202);
      expect(completed.headers['content-type']).toMatch(/^application\/json/);
      await t.deps.engine.idle();
      const retried = await executionRow(t, completed.body.execution_id);
      expect(retried).toMatchObject({
        status: 'completed',
        retry_of_execution_id: failedId,
        workflow_snapshot_id: (await executionRow(t, failedId)).workflow_snapshot_id,
      });
      expect(JSON.parse(retried.output!)).toEqual({ ok: true });
      expect([hits.get('retry1'), hits.get('retry2')]).toEqual([1, 2]);
      const rows = await stepRows(t, completed.body.execution_id);
      expect(rows.map((s) => [s.node_id, s.status])).toEqual([
        ['hook', 'completed'],
        ['first', 'completed'],
        ['flaky', 'completed'],
        ['after', 'completed'],
      ]);
      expect((await executionRow(t, failedId)).status).toBe('failed');
    });

    it('refuses to retry an execution that did not fail (409) and another workspace’s (404)', async () => {
      const okId = await runToRest(
        t,
        await workflowWith(t, 'Fine', {
          nodes: [node('hook', 'webhook'), node('a', 'set', { values: { a: 1 } })],
          edges: [edge('hook', 'a')],
        }),
      );
      const refused = await t.request('POST', `/api/v1/executions/${okId}/retry`);
      expect(refused.status).toBe(409);
      expect(refused.body.errors[0].code).toBe('invalid_state');
      expect((await t.request('POST', `/api/v1/executions/${okId}/retry`, { token: t.tokens.other })).status).toBe(404);
    });
  });

  describe('recovery', () => {
    it('resumes an execution left running from its last persisted step, never re-running a completed one', async () => {
      const graph = {
        nodes: [
          node('hook', 'webhook'),
          node('first', 'http', { url: `${base}/flaky/rec1/1` }),
          node('second', 'http', { url: `${base}/flaky/rec2/1` }),
        ],
        edges: [edge('hook', 'first'), edge('first', 'second')],
      };
      const id = await workflowWith(t, 'Recovery', graph, { activate: true });
      const executionId = await runToRest(t, id, {});
      expect((await executionRow(t, executionId)).status).toBe('completed');
      expect([hits.get('rec1'), hits.get('rec2')]).toEqual([1, 1]);
      // Rewind to a crash after "first" completed: "second" was in flight and left no row.
      const second = (await stepRows(t, executionId)).find((s) => s.node_id === 'second')!;
      await t.deps.db.deleteFrom('execution_steps').where('id', '=', second.id).execute();
      // The process that ran it is gone: on PostgreSQL its lease is gone with it (expired).
      await t.deps.db
        .updateTable('executions')
        .set({ status: 'running', finished_at: null, output: null, lease_owner: null, lease_expires_at: null })
        .where('id', '=', executionId)
        .execute();
      await t.deps.engine.start();
      await t.deps.engine.idle();
      expect((await executionRow(t, executionId)).status).toBe('completed');
      expect([hits.get('rec1'), hits.get('rec2')]).toEqual([1, 2]);
      expect((await stepRows(t, executionId)).map((s) => s.node_id)).toEqual(['hook', 'first', 'second']);
    });
  });
});
