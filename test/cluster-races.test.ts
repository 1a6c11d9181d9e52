import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../src/engine/engine.js';
import { holdsLease, lockExecutions, renewLeases, updateHeldExecution } from '../src/engine/cluster/cluster-store.js';
import { wakeParentHeld, writeHeldExecution } from '../src/engine/cluster/held-commit.js';
import type { LeaseChecks } from '../src/engine/cluster/held-commit.js';
import { WriteBatcher } from '../src/engine/commit/write-batcher.js';
import { newId } from '../src/lib/ids.js';
import { TEST_DATABASE_URL } from './support/dialects.js';
import { edge, executionRow, node, stepRows, workflowWith } from './support/engine-helpers.js';
import { startWorker, until } from './support/cluster-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Three races of several workers on one PostgreSQL, found by the crash campaign
 * (bench/crash-campaign.mjs). Leases, row locks and notifications exist only there: on SQLite one
 * process owns every execution, so this suite runs on PostgreSQL alone. Each test provokes its
 * interleaving deterministically (by row locks and by waiting on `pg_stat_activity`, never on
 * time) and fails without its fix.
 */
const describePostgres = TEST_DATABASE_URL ? describe : describe.skip;

describePostgres('cluster races [postgres]', () => {
  let t: TestApp;
  let server: http.Server;
  let base: string;
  const gates = new Map<string, http.ServerResponse[]>();
  const opened = new Set<string>();
  const engines: Engine[] = [];

  beforeAll(async () => {
    t = await createTestApp('postgres');
    // The app's own engine stays out: the engines of each test are the only workers.
    t.deps.engine.cluster?.stopClaiming();
    server = http.createServer((req, res) => {
      const name = (req.url ?? '/').slice(1);
      // An open gate lets later requests through (a run another test's worker took over).
      if (opened.has(name)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      else gates.set(name, [...(gates.get(name) ?? []), res]);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const engine of engines) await engine.stop();
    server.closeAllConnections();
    server.close();
    await t.close();
  });

  const worker = (processId = newId(), timing: { timers?: boolean; heartbeatMs?: number; pollMs?: number } = {}) =>
    startWorker(t, engines, { processId, ...timing });
  const open = (name: string) => {
    opened.add(name);
    for (const res of gates.get(name) ?? []) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    gates.set(name, []);
  };
  /** Whether some session of this database waits for a row lock (a statement blocked by another transaction). */
  const someoneBlocked = async () => {
    const rows = await sql<{
      n: string;
    }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(t.deps.db);
    return Number(rows.rows[0]!.n) > 0;
  };
  const executionsOf = (workflowId: string) =>
    t.deps.db.selectFrom('executions').selectAll().where('workflow_id', '=', workflowId).orderBy('inserted_at').execute();
  const run = async (workflowId: string) => {
    const res = await t.request('POST', `/api/v1/workflows/${workflowId}/run`, { body: { data: {} } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.execution_id as string;
  };

  it('a heartbeat renews its leases without waiting for a row its own group commit holds locked', async () => {
    const gate = `gate-${newId()}`;
    const flow = await workflowWith(
      t,
      'Held',
      { nodes: [node('hook', 'webhook'), node('wait', 'http', { url: `${base}/${gate}` })], edges: [edge('hook', 'wait')] },
      { activate: true },
    );
    const owner = newId();
    const engine = await worker(owner);
    const executionId = await run(flow);
    await until(() => (gates.get(gate)?.length ?? 0) === 1);
    expect((await executionRow(t, executionId)).lease_owner).toBe(owner);
    engine.cluster!.stopClaiming();

    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    // The worker's group commit, still open, holding the execution's row.
    const batch = t.deps.db.transaction().execute(async (trx) => {
      expect(await updateHeldExecution(trx, executionId, owner, 30_000, { updated_at: t.clock.now() })).toBe(true);
      locked();
      await released;
    });
    await lockTaken;
    const renewal = renewLeases(t.deps.db, owner, 30_000);
    const first = await Promise.race([renewal.then(() => 'renewed' as const), until(someoneBlocked).then(() => 'blocked' as const)]);
    release();
    await batch;
    expect(first).toBe('renewed');
    // The locked row is still this worker's: its run must not be stopped as if its lease were lost.
    expect([...(await renewal)]).toEqual([executionId]);
    open(gate);
    await engine.idle();
    expect((await executionRow(t, executionId)).status).toBe('completed');
  });

  it('two workers’ group commits touching the same executions in opposite orders never deadlock', async () => {
    const flow = await workflowWith(t, 'Rows', { nodes: [node('hook', 'webhook')], edges: [] }, { activate: true });
    const a = await run(flow);
    const b = await run(flow);
    let ranA = 0;
    let ranB = 0;
    let firstA = false;
    let firstB = false;
    const touch = (id: string) => t.deps.db.updateTable('executions').set({ updated_at: t.clock.now() }).where('id', '=', id);
    // Each batch writes both rows; each waits, after its first write, until the other batch has
    // written its own first row or is blocked by this one (so both hold one row, if they can).
    const one = new WriteBatcher(t.deps.db, lockExecutions);
    const two = new WriteBatcher(t.deps.db, lockExecutions);
    const writes = Promise.all([
      one.write(
        async (trx) => {
          ranA += 1;
          await trx.executeQuery(touch(a).compile());
          firstA = true;
          await until(async () => firstB || (await someoneBlocked()));
          await trx.executeQuery(touch(b).compile());
        },
        [a, b],
      ),
      two.write(
        async (trx) => {
          ranB += 1;
          await trx.executeQuery(touch(b).compile());
          firstB = true;
          await until(async () => firstA || (await someoneBlocked()));
          await trx.executeQuery(touch(a).compile());
        },
        [b, a],
      ),
    ]);
    await writes;
    // A deadlock aborts one batch (PostgreSQL picks a victim) and the batcher writes it again.
    expect({ ranA, ranB, commits: one.commits + two.commits }).toEqual({ ranA: 1, ranB: 1, commits: 2 });
  });

  it('a worker takes over a dead worker’s execution when its lease expires, not at its next poll', async () => {
    const flow = await workflowWith(
      t,
      'Orphan',
      { nodes: [node('hook', 'webhook'), node('a', 'set', { values: { a: 1 } })], edges: [edge('hook', 'a')] },
      { activate: true },
    );
    // Committed pending with no worker claiming, then made a dead worker's, its lease running out soon.
    const executionId = await run(flow);
    await sql`update executions set status = 'running', lease_owner = 'dead-worker', run_at = null,
      lease_expires_at = to_char((clock_timestamp() + interval '400 milliseconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
      where id = ${executionId}`.execute(t.deps.db);
    // The poll (the backstop) would come only in ten minutes: the heartbeat's watch must claim it.
    const engine = await worker(newId(), { timers: true, heartbeatMs: 100, pollMs: 600_000 });
    await until(async () => (await executionRow(t, executionId)).status === 'completed');
    await engine.idle();
    engine.cluster!.stopClaiming();
  });

  describe('a child’s end and its parent', () => {
    /** A child workflow and a parent calling it, each with a gate of its own (so no other test's run passes them). */
    const flows = async () => {
      const childGate = `child-${newId()}`;
      const parentGate = `parent-${newId()}`;
      const childFlow = await workflowWith(
        t,
        'Child',
        {
          nodes: [
            node('hook', 'webhook'),
            node('work', 'http', { url: `${base}/${childGate}` }),
            node('answer', 'set', { values: { from: 'child' } }),
          ],
          edges: [edge('hook', 'work'), edge('work', 'answer')],
        },
        { activate: true },
      );
      // The call and a slow branch beside it: the parent is still in flight when its child ends.
      const parentFlow = await workflowWith(
        t,
        'Parent',
        {
          nodes: [
            node('hook', 'webhook'),
            node('call', 'call_workflow', { workflow_id: childFlow, input: {} }),
            node('slow', 'http', { url: `${base}/${parentGate}` }),
            node('after', 'set', { values: { got: '{{ nodes.call.from }}' } }),
          ],
          edges: [edge('hook', 'call'), edge('hook', 'slow'), edge('call', 'after'), edge('slow', 'after')],
        },
        { activate: true },
      );
      return { childGate, parentGate, childFlow, parentFlow };
    };

    it('a parent in the same worker never takes the end of a child whose final commit did not land', async () => {
      const { childGate, parentGate, childFlow, parentFlow } = await flows();
      const engine = await worker();
      const parentId = await run(parentFlow);
      await until(() => (gates.get(childGate)?.length ?? 0) === 1 && (gates.get(parentGate)?.length ?? 0) === 1);
      engine.cluster!.stopClaiming();
      const [child] = await executionsOf(childFlow).then((rows) => rows.filter((row) => row.parent_execution_id === parentId));
      // Another worker takes the child over (this one paused past its lease): the child's final
      // commit here must fail and its end stay unknown to the parent.
      await t.deps.db
        .updateTable('executions')
        .set({ lease_owner: 'another-worker', lease_expires_at: '2999-01-01T00:00:00.000000Z' })
        .where('id', '=', child!.id)
        .execute();
      open(childGate);
      await until(async () => !engine['flights'].inFlight.has(child!.id));
      open(parentGate);
      await engine.idle();
      const parent = await executionRow(t, parentId);
      expect(parent.status).toBe('waiting');
      const call = (await stepRows(t, parentId)).find((row) => row.node_id === 'call')!;
      expect(call.status).toBe('waiting');
      expect((await executionRow(t, child!.id)).status).toBe('running');
    });

    it('a parent committing its wait sees a child that ended in another worker just before (no lost wake-up)', async () => {
      const owner = newId();
      const { childGate, parentGate, childFlow, parentFlow } = await flows();
      const engine = await worker(owner);
      const parentId = await run(parentFlow);
      await until(() => (gates.get(childGate)?.length ?? 0) === 1 && (gates.get(parentGate)?.length ?? 0) === 1);
      engine.cluster!.stopClaiming();
      const [child] = await executionsOf(childFlow).then((rows) => rows.filter((row) => row.parent_execution_id === parentId));
      expect((await executionRow(t, parentId)).lease_owner).toBe(owner);

      // The child's end, committed by another worker at the worst moment: after the parent's
      // commit began, before it wrote its wait.
      const childEnds = () =>
        t.deps.db.transaction().execute(async (trx) => {
          await trx
            .updateTable('executions')
            .set({ status: 'completed', output: '{"from":"child"}', finished_at: t.clock.now(), lease_owner: null, lease_expires_at: null })
            .where('id', '=', child!.id)
            .execute();
          await wakeParentHeld(trx, parentId, child!.id, t.clock.now());
        });
      let injected = false;
      const inject = async () => {
        if (injected) return;
        injected = true;
        await childEnds();
      };
      const coordination: LeaseChecks = {
        holds: async (trx, id) => {
          await inject();
          return holdsLease(trx, id, owner, 30_000);
        },
        updateHeld: async (trx, id, changes) => {
          await inject();
          return updateHeldExecution(trx, id, owner, 30_000, changes);
        },
      };
      const now = t.clock.now();
      await t.deps.db
        .transaction()
        .execute((trx) =>
          writeHeldExecution(
            trx,
            coordination,
            parentId,
            { status: 'waiting', run_at: null, updated_at: now, lease_owner: null, lease_expires_at: null },
            [child!.id],
          ),
        );
      const parent = await executionRow(t, parentId);
      expect(parent.status).toBe('waiting');
      // Due at once: whichever worker claims it next finds the child's end.
      expect(parent.run_at).toBe(now);
      open(childGate);
      open(parentGate);
      await engine.idle();
    });

    it('a child ending while its parent commits its wait wakes the parent once that commit lands', async () => {
      const owner = newId();
      const { childGate, parentGate, childFlow, parentFlow } = await flows();
      const engine = await worker(owner);
      const parentId = await run(parentFlow);
      await until(() => (gates.get(childGate)?.length ?? 0) === 1 && (gates.get(parentGate)?.length ?? 0) === 1);
      engine.cluster!.stopClaiming();
      const [child] = await executionsOf(childFlow).then((rows) => rows.filter((row) => row.parent_execution_id === parentId));
      const plain: LeaseChecks = {
        holds: (trx, id) => holdsLease(trx, id, owner, 30_000),
        updateHeld: (trx, id, changes) => updateHeldExecution(trx, id, owner, 30_000, changes),
      };
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let waited!: () => void;
      const waitWritten = new Promise<void>((resolve) => (waited = resolve));
      // The parent's commit: its wait written (no child ended yet), not yet committed.
      const parentCommit = t.deps.db.transaction().execute(async (trx) => {
        await writeHeldExecution(
          trx,
          plain,
          parentId,
          { status: 'waiting', run_at: null, updated_at: t.clock.now(), lease_owner: null, lease_expires_at: null },
          [child!.id],
        );
        waited();
        await released;
      });
      await waitWritten;
      const now = t.clock.now();
      const childCommit = t.deps.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('executions')
          .set({ status: 'completed', output: '{"from":"child"}', finished_at: now, lease_owner: null, lease_expires_at: null })
          .where('id', '=', child!.id)
          .execute();
        await wakeParentHeld(trx, parentId, child!.id, now);
      });
      await until(someoneBlocked);
      release();
      await Promise.all([parentCommit, childCommit]);
      expect((await executionRow(t, parentId)).run_at).toBe(now);
      open(childGate);
      open(parentGate);
      await engine.idle();
    });
  });
});
