import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ClaimPasses, type ClaimSettings } from '../src/engine/cluster/claim-passes.js';
import type { Engine } from '../src/engine/engine.js';
import { newId } from '../src/lib/ids.js';
import { TEST_DATABASE_URL } from './support/dialects.js';
import { edge, executionRow, node, workflowWith } from './support/engine-helpers.js';
import { startWorker, until } from './support/cluster-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Turns (engine/worker-turns.ts): a new execution is announced to one worker, not to every
 * worker, and a worker that cannot take its turn hands it on. PostgreSQL only (workers and
 * notifications exist only there). The workers here have no timers, so no poll: a turn that no
 * worker took would leave its execution pending, and the test would fail.
 */
const describePostgres = TEST_DATABASE_URL ? describe : describe.skip;

describePostgres('cluster turns [postgres]', () => {
  let t: TestApp;
  let server: http.Server;
  let gateUrl: string;
  const held: http.ServerResponse[] = [];
  const engines: Engine[] = [];

  beforeAll(async () => {
    t = await createTestApp('postgres');
    // The app's own engine only creates executions here (as an API process would).
    t.deps.engine.cluster?.stopClaiming();
    server = http.createServer((_req, res) => held.push(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    gateUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/gate`;
  });
  afterAll(async () => {
    for (const res of held) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    for (const engine of engines) await engine.stop();
    server.closeAllConnections();
    server.close();
    await t.close();
  });

  const worker = (maxConcurrent = 64) => startWorker(t, engines, { maxConcurrent });
  const knowEachOther = (...workers: Engine[]) =>
    until(() => workers.every((w) => workers.every((other) => w.cluster!.knownWorkers().includes(other.cluster!.processId))));
  const run = async (workflowId: string) => {
    const res = await t.request('POST', `/api/v1/workflows/${workflowId}/run`, { body: { data: {} } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.execution_id as string;
  };
  const completed = async (id: string) => (await executionRow(t, id)).status === 'completed';
  const quick = () =>
    workflowWith(
      t,
      `Quick ${newId()}`,
      { nodes: [node('hook', 'webhook'), node('a', 'set', { values: { a: 1 } })], edges: [edge('hook', 'a')] },
      { activate: true },
    );

  it('claims each delivery in one worker only, and spreads the deliveries over the workers', async () => {
    const first = await worker();
    const second = await worker();
    await knowEachOther(first, second);
    const flow = await quick();
    // A pass's `this` is its worker's ClaimPasses, which claims for the worker's process id.
    const passes = vi.spyOn(ClaimPasses.prototype as unknown as { claimWhileRoom: () => Promise<void> }, 'claimWhileRoom');
    try {
      const runsBy = new Map<string, number>();
      for (let i = 0; i < 20; i++) {
        const id = await run(flow);
        await until(() => completed(id));
      }
      for (const call of passes.mock.contexts) {
        const owner = (call as unknown as { settings: ClaimSettings }).settings.processId;
        runsBy.set(owner, (runsBy.get(owner) ?? 0) + 1);
      }
      // Every worker claiming for every delivery made 40 passes (two per delivery); one per delivery makes 20.
      expect(passes.mock.calls.length).toBeLessThanOrEqual(24);
      expect(runsBy.get(first.cluster!.processId) ?? 0).toBeGreaterThan(0);
      expect(runsBy.get(second.cluster!.processId) ?? 0).toBeGreaterThan(0);
    } finally {
      passes.mockRestore();
      first.cluster!.stopClaiming();
      second.cluster!.stopClaiming();
      await first.idle();
      await second.idle();
    }
  });

  it('a worker with no room on its turn hands it on: every delivery runs in the worker that has room', async () => {
    const full = await worker(1);
    // Alone, it takes the gated run and is then full.
    const gated = await workflowWith(
      t,
      'Gated',
      { nodes: [node('hook', 'webhook'), node('wait', 'http', { url: gateUrl })], edges: [edge('hook', 'wait')] },
      { activate: true },
    );
    await run(gated);
    await until(() => held.length === 1);
    const free = await worker();
    await knowEachOther(full, free);
    const flow = await quick();
    // One at a time, so the free worker is idle when a turn is the full one's (about half of
    // them): only the hand-on can get that delivery run.
    for (let i = 0; i < 12; i++) {
      const id = await run(flow);
      await until(() => completed(id));
    }
    expect(held).toHaveLength(1);
    free.cluster!.stopClaiming();
    await free.idle();
  });

  it('a worker that finds its turn held back by a limit hands it on: the run holding the limit lets it in when it ends', async () => {
    const first = await worker();
    const second = await worker();
    await knowEachOther(first, second);
    const gate = `${gateUrl}-limited`;
    const limited = await workflowWith(
      t,
      'Limited',
      {
        nodes: [node('hook', 'webhook'), node('wait', 'http', { url: gate })],
        edges: [edge('hook', 'wait')],
        settings: { concurrency_limit: 1 },
      },
      { activate: true },
    );
    const waiting = held.length;
    let running = await run(limited);
    await until(() => held.length === waiting + 1);
    // Each next run's turn, whichever worker has it, is held back by the limit. Handed on, every
    // worker knows work waits, and the one whose run ends claims it. Without the hand-on a turn
    // of the worker not running the limited run stalls (no poll here): half the rounds.
    for (let round = 0; round < 5; round++) {
      const next = await run(limited);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await executionRow(t, next)).status).toBe('pending');
      held.pop()!.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      await until(() => completed(running));
      await until(() => held.length === waiting + 1);
      running = next;
    }
    held.pop()!.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    await until(() => completed(running));
    first.cluster!.stopClaiming();
    second.cluster!.stopClaiming();
    await first.idle();
    await second.idle();
  });

  it('a worker that stops claiming (a drain) leaves the turns to the others at once', async () => {
    const leaving = await worker();
    const staying = await worker();
    await knowEachOther(leaving, staying);
    leaving.cluster!.stopClaiming();
    await until(() => !staying.cluster!.knownWorkers().includes(leaving.cluster!.processId));
    const flow = await quick();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await run(flow));
    for (const id of ids) await until(() => completed(id));
    staying.cluster!.stopClaiming();
    await staying.idle();
  });

  it('sends a worker’s announcements one at a time, in order: a `+` asked for just before a drain is dropped, so it never lands after the `-`', async () => {
    const draining = await worker();
    const id = draining.cluster!.processId;
    const heard: string[] = [];
    const stop = await t.database.notifier!.listen('sy_workers', (payload) => {
      if (payload.slice(1).split(';')[0] === id) heard.push(payload[0]!);
    });
    try {
      // Its start's `+` out of the way.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await t.database.notifier!.sync();
      heard.length = 0;
      // A `+` asked for (as on hearing a worker new to it), and the drain's `-` in the same tick.
      draining.cluster!.resumeClaiming();
      draining.cluster!.stopClaiming();
      await until(() => heard.includes('-'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await t.database.notifier!.sync()).toBe(true);
      expect(heard).toEqual(['-']);
    } finally {
      stop();
    }
  });
});
