import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { Engine, EngineBusyError, type EngineOptions } from '../src/engine/engine.js';
import { newId } from '../src/lib/ids.js';

describeEachDialect('workflow settings', (dialect) => {
  let t: TestApp;
  let server: http.Server;
  let base: string;
  /** Requests to /gate wait here until the test opens the gate. */
  let held: http.ServerResponse[] = [];
  beforeAll(async () => {
    t = await createTestApp(dialect);
    server = http.createServer((req, res) => {
      if (req.url === '/gate') {
        held.push(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await t.close();
  });

  /**
   * An engine of its own beside the app's, as a second process would be: on PostgreSQL a
   * claiming one (engine/cluster.ts), and the app's engine stops claiming meanwhile so that it
   * does not run these executions itself.
   */
  const engines: Engine[] = [];
  const ownEngine = (options: Partial<EngineOptions>): Engine => {
    const notifier = t.database.notifier;
    const cluster = notifier
      ? { processId: newId(), notifier, leaseMs: 30_000, heartbeatMs: 10_000, pollMs: 1_000, maxRunning: 64, runsSteps: true }
      : undefined;
    t.deps.engine.cluster?.stopClaiming();
    const engine = new Engine({
      db: t.deps.db,
      clock: t.clock,
      settings: { httpAllow: ['127.0.0.1'] },
      timers: false,
      cluster,
      ...options,
    });
    engines.push(engine);
    return engine;
  };
  afterEach(() => {
    engines.length = 0;
    t.deps.engine.cluster?.resumeClaiming();
  });
  // A new execution is committed pending on PostgreSQL, where a worker claims it (docs/deploy.md).
  const started = dialect === 'sqlite' ? 'running' : 'pending';

  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(condition()).toBe(true);
  };
  const openGate = () => {
    const waiting = held;
    held = [];
    for (const res of waiting) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  };

  describe('concurrency_limit', () => {
    it('runs at most the limit at once, queues the rest pending in order, and holds back no other workflow', async () => {
      const gated = { nodes: [node('hook', 'webhook'), node('call', 'http', { url: `${base}/gate` })], edges: [edge('hook', 'call')] };
      const limited = await workflowWith(t, 'Limited', { ...gated, settings: { concurrency_limit: 2 } }, { activate: true });
      const free = await workflowWith(
        t,
        'Unlimited',
        { nodes: [node('hook', 'webhook'), node('a', 'set', { values: { a: 1 } })], edges: [edge('hook', 'a')] },
        { activate: true },
      );
      const run = async (id: string) =>
        (await t.request('POST', `/api/v1/workflows/${id}/run`, { body: { data: {} } })).body as { execution_id: string; status: string };
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await run(limited));
      expect(answers.map((a) => a.status)).toEqual([started, started, 'pending', 'pending']);
      await until(() => held.length === 2);
      // Another workflow is not held back by the queue of this one.
      const other = await run(free);
      expect(other.status).toBe(started);
      await until(() => held.length === 2);
      openGate();
      await until(() => held.length === 2);
      openGate();
      await t.deps.engine.idle();
      const rows = await Promise.all(answers.map((a) => executionRow(t, a.execution_id)));
      expect(rows.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
      // The queued ones started after the first two, oldest first.
      expect(rows[2]!.started_at! >= rows[1]!.started_at!).toBe(true);
      expect(rows[3]!.started_at! >= rows[2]!.started_at!).toBe(true);
      expect((await executionRow(t, other.execution_id)).status).toBe('completed');
    });

    it('refuses an invalid limit with a pointer into the graph', async () => {
      const created = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Bad settings' } } });
      const res = await t.request('PUT', `/api/v1/workflows/${created.body.data.id}/graph`, {
        body: { data: { graph: { nodes: [node('hook', 'webhook')], edges: [], settings: { concurrency_limit: -1 } } } },
      });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'invalid_settings', source: { pointer: '/data/graph/settings/concurrency_limit' } });
    });
  });

  describe('admission control', () => {
    // The waiting room is in front of one process's own queue (SQLite); on PostgreSQL new
    // executions are always committed pending and workers claim them at their own pace.
    it.skipIf(dialect === 'postgres')(
      'holds new runs back while the queue is full, admits them oldest first as it drains, and creates nothing for a caller that gives up',
      async () => {
        const engine = ownEngine({ maxConcurrent: 1, admissionQueueLimit: 1 });
        const id = await workflowWith(
          t,
          'Admission',
          { nodes: [node('hook', 'webhook'), node('call', 'http', { url: `${base}/gate` })], edges: [edge('hook', 'call')] },
          { activate: true },
        );
        const workflow = await t.deps.db
          .selectFrom('workflows')
          .select(['active_snapshot_id'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        const start = (n: number) => ({
          workspaceId: t.workspaces.main,
          workflowId: id,
          snapshotId: workflow.active_snapshot_id!,
          userId: null,
          trigger: { method: 'RUN', headers: {}, query: {}, body: n },
        });
        const first = await engine.run(start(1));
        const second = await engine.run(start(2));
        expect([first.status, second.status]).toEqual(['running', 'pending']);
        await expect(engine.run(start(3), { admissionTimeoutMs: 50 })).rejects.toBeInstanceOf(EngineBusyError);
        const fourth = engine.run(start(4));
        await until(() => held.length === 1);
        expect((await t.deps.db.selectFrom('executions').select('id').where('workflow_id', '=', id).execute()).length).toBe(2);
        openGate();
        const admitted = await fourth;
        expect(admitted.status).toBe('pending');
        for (let i = 0; i < 2; i++) {
          await until(() => held.length === 1);
          openGate();
        }
        await engine.idle();
        const rows = await t.deps.db
          .selectFrom('executions')
          .select(['inputs', 'status'])
          .where('workflow_id', '=', id)
          .orderBy('inserted_at')
          .execute();
        expect(rows.map((r) => [JSON.parse(r.inputs!).body, r.status])).toEqual([
          [1, 'completed'],
          [2, 'completed'],
          [4, 'completed'],
        ]);
        await engine.stop();
      },
    );
  });

  describe('recovery under limits', () => {
    it('resumes a run left running at once and starts the pending ones as slots free, oldest first', async () => {
      const gated = await workflowWith(
        t,
        'Recover in order',
        { nodes: [node('hook', 'webhook'), node('call', 'http', { url: `${base}/gate` })], edges: [edge('hook', 'call')] },
        { activate: true },
      );
      const snapshot = (
        await t.deps.db.selectFrom('workflows').select('active_snapshot_id').where('id', '=', gated).executeTakeFirstOrThrow()
      ).active_snapshot_id!;
      const first = ownEngine({ maxConcurrent: 1 });
      const runs = [];
      for (let n = 1; n <= 3; n++)
        runs.push(await first.run({ workspaceId: t.workspaces.main, workflowId: gated, snapshotId: snapshot, userId: null, trigger: n }));
      expect(runs.map((r) => r.status)).toEqual([started, 'pending', 'pending']);
      await until(() => held.length === 1);
      // The process stops with one run in flight (its row stays running) and two pending.
      await first.stop();
      held = [];
      const second = ownEngine({ maxConcurrent: 1 });
      await second.start();
      for (let i = 0; i < 3; i++) {
        await until(() => held.length === 1);
        openGate();
      }
      await second.idle();
      const rows = await Promise.all(runs.map((r) => executionRow(t, r.execution_id)));
      expect(rows.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
      expect(rows[1]!.started_at! <= rows[2]!.started_at!).toBe(true);
      await second.stop();
    });
  });

  describe('queued starts', () => {
    it('shows a queued execution running as soon as it starts, even while its first step is a long pure one', async () => {
      const engine = ownEngine({ maxConcurrent: 1 });
      const blocker = await workflowWith(
        t,
        'Blocker',
        { nodes: [node('hook', 'webhook'), node('call', 'http', { url: `${base}/gate` })], edges: [edge('hook', 'call')] },
        { activate: true },
      );
      const slow = await workflowWith(
        t,
        'Long pure step',
        {
          nodes: [
            node('hook', 'webhook'),
            node('spin', 'code', { code: 'const until = Date.now() + 1500; while (Date.now() < until) {} return 1;' }),
          ],
          edges: [edge('hook', 'spin')],
        },
        { activate: true },
      );
      const snapshotOf = async (id: string) =>
        (await t.deps.db.selectFrom('workflows').select('active_snapshot_id').where('id', '=', id).executeTakeFirstOrThrow())
          .active_snapshot_id!;
      const start = async (id: string) =>
        engine.run({ workspaceId: t.workspaces.main, workflowId: id, snapshotId: await snapshotOf(id), userId: null, trigger: null });
      await start(blocker);
      const queued = await start(slow);
      expect(queued.status).toBe('pending');
      await until(() => held.length === 1);
      openGate();
      let seen = '';
      for (let i = 0; i < 100 && seen !== 'running'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        seen = (await executionRow(t, queued.execution_id)).status;
      }
      expect(seen).toBe('running');
      await engine.idle();
      expect((await executionRow(t, queued.execution_id)).status).toBe('completed');
      await engine.stop();
    });
  });

  describe('save_step_payloads: false', () => {
    const graph = (extra: ReturnType<typeof node>[] = [], extraEdges: ReturnType<typeof edge>[] = []) => ({
      nodes: [
        node('hook', 'webhook'),
        node('shape', 'code', { code: 'console.log("secret", input.body.card); return { last4: input.body.card.slice(-4) };' }),
        ...extra,
      ],
      edges: [edge('hook', 'shape'), ...extraEdges],
      settings: { save_step_payloads: false },
    });

    it('keeps status, timings and metrics but no step input, output or logs once the run ends', async () => {
      const executionId = await runToRest(t, await workflowWith(t, 'Private', graph()), {
        draft: true,
        input: { card: '4242424242424242' },
      });
      const execution = await executionRow(t, executionId);
      expect(execution.status).toBe('completed');
      expect(JSON.parse(execution.output!)).toEqual({ last4: '4242' });
      const rows = await stepRows(t, executionId);
      expect(rows.map((s) => [s.node_id, s.status, s.input, s.output, s.logs])).toEqual([
        ['hook', 'completed', null, null, null],
        ['shape', 'completed', null, null, null],
      ]);
      expect(rows[1]!.output_bytes).toBe(JSON.stringify({ last4: '4242' }).length);
      expect(typeof rows[1]!.duration_ms).toBe('number');
      expect(rows[1]!.memory_bytes).toBeGreaterThan(0);
    });

    it('keeps outputs only while the run is unfinished, so a wait resumes with them', async () => {
      const executionId = await runToRest(
        t,
        await workflowWith(
          t,
          'Private wait',
          graph(
            [node('pause', 'wait', { duration_ms: 1000 }), node('use', 'set', { values: { again: '{{ nodes.shape.last4 }}' } })],
            [edge('shape', 'pause'), edge('pause', 'use')],
          ),
        ),
        { draft: true, input: { card: '4000000000000077' } },
      );
      const waitingRows = await stepRows(t, executionId);
      expect(waitingRows.find((s) => s.node_id === 'shape')).toMatchObject({ input: null, logs: null, output: { last4: '0077' } });
      t.clock.advance(1000);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      const execution = await executionRow(t, executionId);
      expect(JSON.parse(execution.output!)).toEqual({ again: '0077' });
      expect((await stepRows(t, executionId)).every((s) => s.output === null && s.input === null)).toBe(true);
    });

    it('retries a failed run from its trigger, since no outputs were kept', async () => {
      const failing = graph(
        [node('boom', 'code', { code: 'if (nodes.hook.body.fail) throw new Error("no"); return 1;' })],
        [edge('shape', 'boom')],
      );
      const failedId = await runToRest(t, await workflowWith(t, 'Private retry', failing), {
        draft: true,
        input: { card: '5555555555554444', fail: true },
      });
      expect((await executionRow(t, failedId)).status).toBe('failed');
      const retry = await t.request('POST', `/api/v1/executions/${failedId}/retry`);
      expect(retry.status).toBe(202);
      await t.deps.engine.idle();
      const rows = await stepRows(t, retry.body.execution_id);
      // "shape" runs again (its output was not kept); "boom" fails again on the same payload.
      expect(rows.map((s) => [s.node_id, s.status])).toEqual([
        ['hook', 'completed'],
        ['shape', 'completed'],
        ['boom', 'failed'],
      ]);
    });
  });
});
