import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaimPasses, type ClaimHost } from '../src/engine/cluster/claim-passes.js';
import type { Claimed } from '../src/engine/cluster/cluster-store.js';
import { insertExecution } from '../src/engine/execution-store.js';
import { newExecutionRow, runIdentity } from '../src/engine/run/execution-start.js';
import { newId } from '../src/lib/ids.js';
import { TEST_DATABASE_URL } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * A worker's claim passes (engine/claim-passes.ts) against real claims: when a pass runs, how
 * requests during one coalesce, when a pass is skipped as finding nothing, and when a turn is
 * handed on. PostgreSQL only: claims under leases are the cluster's.
 */
const describePostgres = TEST_DATABASE_URL ? describe : describe.skip;

describePostgres('claim passes [postgres]', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp('postgres');
    // The app's own engine claims nothing here: only the passes under test do.
    t.deps.engine.cluster?.stopClaiming();
  });
  afterAll(async () => {
    await t.close();
  });

  /** A worker as the passes see it: its free slots, what they dispatched, and every pass's look at its room. */
  const worker = (free = 64) => {
    const host = { free, looks: 0, dispatched: [] as Claimed[], turnsPassed: 0, errors: [] as unknown[] };
    const claimHost: ClaimHost = {
      freeSlots: () => {
        host.looks += 1;
        return host.free;
      },
      dispatchClaimed: (claimed) => host.dispatched.push(...claimed),
      passTurn: () => (host.turnsPassed += 1),
      onError: (error) => host.errors.push(error),
    };
    const passes = new ClaimPasses(
      t.deps.db,
      t.clock,
      { processId: newId(), leaseMs: 30_000, pollMs: 1_000, maxRunning: 1_000 },
      claimHost,
      true,
    );
    return { host, passes };
  };
  const pending = async () => {
    const identity = runIdentity({
      workspaceId: t.workspaces.main,
      workflowId: newId(),
      snapshotId: newId(),
      userId: null,
      trigger: { body: {} },
    });
    const row = newExecutionRow(identity, 'pending', 0, t.clock.now(), null, null);
    await insertExecution(t.deps.db, row, []);
    return row;
  };
  /** Waits for the passes under way (and those they start), which must have failed nowhere. */
  const settled = async ({ host, passes }: ReturnType<typeof worker>) => {
    while (passes.passing) await passes.passing;
    expect(host.errors).toEqual([]);
  };

  it('claims what is pending under its lease and hands it to its worker', async () => {
    const w = worker();
    const { host, passes } = w;
    const rows = [await pending(), await pending()];
    await passes.request();
    await settled(w);
    expect(host.dispatched.map((claimed) => claimed.row.id).sort()).toEqual(rows.map((row) => row.id).sort());
    const stored = await t.deps.db
      .selectFrom('executions')
      .select(['status', 'lease_owner'])
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .execute();
    expect(stored.map((row) => row.status)).toEqual(['running', 'running']);
    expect(new Set(stored.map((row) => row.lease_owner)).size).toBe(1);
    expect(stored[0]!.lease_owner).not.toBeNull();
  });

  it('runs one more pass after the one under way for any number of requests made during it, not one each', async () => {
    const w = worker();
    const { host, passes } = w;
    const first = passes.request(true);
    void passes.request(true);
    void passes.request(true);
    await first;
    await settled(w);
    // The first pass, then one for the requests it may have read too early to see.
    expect(host.looks).toBe(2);
  });

  it('after a pass that found less than its room, asks nothing until work is announced', async () => {
    const w = worker();
    const { host, passes } = w;
    await passes.request();
    await settled(w);
    expect(host.looks).toBe(1);
    // A run ending here asks again: nothing was announced since, so no claim is made.
    await passes.request();
    expect(host.looks).toBe(1);
    const row = await pending();
    passes.arrived();
    await settled(w);
    expect(host.looks).toBe(2);
    expect(host.dispatched.map((claimed) => claimed.row.id)).toEqual([row.id]);
  });

  it('hands a turn on when it has no room for it, and only a turn', async () => {
    const w = worker(0);
    const { host, passes } = w;
    passes.arrived();
    await settled(w);
    expect(host.turnsPassed).toBe(0);
    passes.turn();
    await settled(w);
    expect(host.turnsPassed).toBe(1);
    expect(host.dispatched).toEqual([]);
  });

  it('claims nothing once stopped, and claims again when resumed', async () => {
    const w = worker();
    const { host, passes } = w;
    passes.stop();
    expect(passes.active).toBe(false);
    const row = await pending();
    await passes.request(true);
    passes.arrived();
    await settled(w);
    expect(host.looks).toBe(0);
    passes.resume();
    await settled(w);
    expect(host.dispatched.map((claimed) => claimed.row.id)).toEqual([row.id]);
  });
});
