import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../src/engine/engine.js';
import { answerChannel, parseProcessMessage, workerConnectionName, type AnswerMessage } from '../src/engine/cluster/cluster-messages.js';
import { listSteps, type ExecutionRow } from '../src/engine/execution-store.js';
import { handedRow } from '../src/engine/cluster/hand-off.js';
import { PRESENCE_LOCK_CLASS } from '../src/db/notifier.js';
import { HAND_OFF_IDS_PER_NOTIFICATION, HAND_OFF_PAYLOAD_BYTES } from '../src/db/migrations/0024-hand-off-chunks.js';
import { newId } from '../src/lib/ids.js';
import { TEST_DATABASE_URL } from './support/dialects.js';
import { edge, executionRow, node, workflowWith } from './support/engine-helpers.js';
import { startWorker, until } from './support/cluster-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { deliver, webhookWorkflow } from './support/webhook-helpers.js';

/**
 * Hand-off (engine/hand-off.ts): an API process gives each new execution to a live worker in the
 * commit that creates it, within the cluster's limits, instead of announcing it for a claim.
 * PostgreSQL only. The app here is an API process (its engine runs no steps); the "workers" are
 * either engines of this process or channels the test listens on itself, announced on
 * sy_workers as a worker announces itself, so what a commit hands over can be read as it is sent.
 */
const describePostgres = TEST_DATABASE_URL ? describe : describe.skip;

describePostgres('cluster hand-off [postgres]', () => {
  let t: TestApp;
  let server: http.Server;
  let gateUrl: string;
  const held: http.ServerResponse[] = [];
  const engines: Engine[] = [];
  const unlisten: (() => void)[] = [];

  beforeAll(async () => {
    t = await createTestApp('postgres', { role: 'api', leaseMs: 1_000 });
    // As `serve --role api` does: it listens (answers, the workers' announcements) and claims nothing.
    await t.deps.engine.start();
    server = http.createServer((_req, res) => held.push(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    gateUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/gate`;
  });
  afterAll(async () => {
    for (const res of held) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    for (const stop of unlisten) stop();
    for (const engine of engines) await engine.stop();
    server.closeAllConnections();
    server.close();
    await t.close();
  });

  const notifier = () => t.database.notifier!;
  const api = () => t.deps.engine.cluster!;
  /**
   * A worker that exists only as its announcement and its own listening connection, named and
   * holding its presence lock as a worker's: what it is handed is recorded, nothing runs. `die()` closes the connection.
   */
  const fakeWorker = async (capacity: number) => {
    const id = newId();
    const messages: string[] = [];
    const connection = new pg.Client({ connectionString: t.database.url!, application_name: workerConnectionName(id) });
    await connection.connect();
    await connection.query('select pg_advisory_lock($1, hashtext($2))', [PRESENCE_LOCK_CLASS, workerConnectionName(id)]);
    connection.on('notification', (message) => messages.push(message.payload ?? ''));
    await connection.query(`LISTEN ${answerChannel(id)}`);
    let open = true;
    const die = async () => {
      if (open) await connection.end();
      open = false;
    };
    unlisten.push(() => void die());
    await notifier().notify(t.deps.db, 'sy_workers', `+${id};${capacity}`);
    await until(() => api().knownWorkers().includes(id));
    const leave = async () => {
      await notifier().notify(t.deps.db, 'sy_workers', `-${id}`);
      await until(() => !api().knownWorkers().includes(id));
      await die();
    };
    return { id, messages, leave, die };
  };
  const run = async (workflowId: string) => {
    const res = await t.request('POST', `/api/v1/workflows/${workflowId}/run`, { body: { data: { input: 'x'.repeat(10) } } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.execution_id as string;
  };
  const flow = (settings: Record<string, unknown> = {}) =>
    workflowWith(
      t,
      `Flow ${newId()}`,
      { nodes: [node('hook', 'webhook'), node('call', 'http', { url: gateUrl })], edges: [edge('hook', 'call')], settings } as never,
      { activate: true },
    );
  const handed = (messages: string[]) =>
    messages.map((payload) => parseProcessMessage(payload)?.handed).filter((message) => message !== undefined);
  /** A new `pending` execution as an API process writes it, copied from `template` with its own id. */
  const pendingCopy = (template: ExecutionRow, now: string, inputs: unknown = template.inputs): ExecutionRow =>
    Object.assign({}, template, {
      id: newId(),
      status: 'pending' as const,
      run_at: now,
      lease_owner: null,
      lease_expires_at: null,
      started_at: null,
      inserted_at: now,
      updated_at: now,
      inputs,
    });
  /** The arguments of `sy_admit_handing_off` for `rows` (no step rows) handed to one worker of `capacity`, the cluster's limit the same. */
  const admitArguments = (rows: ExecutionRow[], now: string, workerId: string, capacity: number) => [
    JSON.stringify(rows),
    '[]',
    rows.map((row) => JSON.stringify({ row, steps: [] })),
    now,
    [workerId],
    [capacity],
    capacity,
    5_000,
    null,
  ];
  /** An execution run and handed to `worker`, whose row the direct calls copy; the worker's messages are cleared after it. */
  const handedTemplate = async (worker: { messages: string[] }): Promise<ExecutionRow> => {
    const template = await executionRow(t, await run(await flow()));
    await until(() => handed(worker.messages).length === 1);
    worker.messages.length = 0;
    return template;
  };
  /**
   * Ends the executions a direct call handed `worker` and takes the worker away, before a test's
   * assertions: a worker left announced would be handed the next tests' work.
   */
  const clearHanded = async (worker: { leave: () => Promise<void> }, ids: string[]) => {
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('id', 'in', ids)
      .execute();
    await worker.leave();
  };
  const ADMIT = 'select sy_admit_handing_off($1::jsonb, $2::jsonb, $3::text[], $4, $5::text[], $6::integer[], $7, $8, $9)';
  /** Calls `sy_admit_handing_off` in a transaction of its own, committed, so its notifications are sent. */
  const admitCommitted = async (rows: ExecutionRow[], now: string, workerId: string, capacity: number) => {
    const client = new pg.Client({ connectionString: t.database.url! });
    await client.connect();
    try {
      await client.query(ADMIT, admitArguments(rows, now, workerId, capacity));
    } finally {
      await client.end();
    }
  };

  it('hands a new execution to the worker in the commit that creates it: running under its short lease, with its row and step rows in the notification', async () => {
    const worker = await fakeWorker(64);
    const id = await run(await flow());
    const row = await executionRow(t, id);
    expect(row).toMatchObject({ status: 'running', lease_owner: worker.id, run_at: null });
    // The hand-off lease is the shorter of the lease (1 s here) and 5 s: counted from the commit on the database's clock.
    const leaseLeft = Date.parse(row.lease_expires_at!) - Date.now();
    expect(leaseLeft).toBeGreaterThan(0);
    expect(leaseLeft).toBeLessThanOrEqual(1_000);
    await until(() => handed(worker.messages).length === 1);
    const message = handed(worker.messages)[0]!;
    expect('c' in message && message.c.map((entry) => entry.row.id)).toEqual([id]);
    if (!('c' in message)) return;
    // The rows as the API process wrote them, which the worker makes exactly the rows inserted.
    expect(message.c[0]!.row).toMatchObject({ status: 'pending', lease_owner: null, inputs: row.inputs });
    expect(message.l).toBe(row.lease_expires_at);
    expect(handedRow(message.c[0]!.row, worker.id, message.l, message.n)).toEqual(row);
    expect(message.c[0]!.steps).toEqual(await listSteps(t.deps.db, id));
    expect(message.c[0]!.steps.map((step) => [step.node_id, step.status])).toEqual([['hook', 'completed']]);
    await worker.leave();
  });

  it('inserts a handed-off execution running, as one row version: no pending version left dead behind it (migration 0020)', async () => {
    const worker = await fakeWorker(64);
    const template = await executionRow(t, await run(await flow()));
    const id = newId();
    const now = new Date().toISOString();
    const row = Object.assign(pendingCopy(template, now), { id });
    const client = new pg.Client({ connectionString: t.database.url! });
    await client.connect();
    try {
      await client.query('begin');
      await client.query(ADMIT, admitArguments([row], now, worker.id, 64));
      // This transaction's own counts of row versions written to executions.
      const written = await client.query(
        `select pg_stat_get_xact_tuples_inserted('executions'::regclass)::integer as inserted, pg_stat_get_xact_tuples_updated('executions'::regclass)::integer as updated`,
      );
      expect(written.rows[0]).toEqual({ inserted: 1, updated: 0 });
      const inserted = await client.query('select status, lease_owner, run_at, started_at from executions where id = $1', [id]);
      expect(inserted.rows[0]).toEqual({ status: 'running', lease_owner: worker.id, run_at: null, started_at: now });
    } finally {
      await client.query('rollback');
      await client.end();
    }
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('id', '=', template.id)
      .execute();
    await worker.leave();
  });

  it('hands no more than the worker’s capacity and the workflow’s own limit allow, and nothing past older due work; the rest stays pending, announced as a turn', async () => {
    const turns: string[] = [];
    unlisten.push(await notifier().listen('sy_work', (payload) => turns.push(payload)));
    const worker = await fakeWorker(2);
    const limited = await flow({ concurrency_limit: 1 });
    const first = await run(limited);
    const second = await run(limited);
    expect((await executionRow(t, first)).lease_owner).toBe(worker.id);
    // The workflow's limit (1) is held by the first: the second is left for a claim.
    expect(await executionRow(t, second)).toMatchObject({ status: 'pending', lease_owner: null });
    await until(() => turns.some((payload) => payload.startsWith('~')));
    // Work held back by its own workflow's limit is no backlog for another workflow.
    const other = await flow();
    const third = await run(other);
    expect((await executionRow(t, third)).lease_owner).toBe(worker.id);
    // The worker's capacity (2) is full now.
    const fourth = await run(other);
    expect(await executionRow(t, fourth)).toMatchObject({ status: 'pending', lease_owner: null });
    // Room again, but the fourth is older due work: nothing new overtakes it.
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('id', '=', third)
      .execute();
    const fifth = await run(other);
    expect(await executionRow(t, fifth)).toMatchObject({ status: 'pending', lease_owner: null });
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('id', 'in', [first, second, fourth, fifth])
      .execute();
    await worker.leave();
  });

  it('hands nothing past the cluster’s running limit', async () => {
    const worker = await fakeWorker(1_000);
    const quick = await flow();
    // Nothing else runs or waits (earlier tests' executions are put out of the way).
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('status', 'in', ['pending', 'running', 'waiting'])
      .execute();
    // The app's limit is the default, 64: 64 are handed over, the 65th is not.
    const ids: string[] = [];
    for (let i = 0; i < 65; i += 1) ids.push(await run(quick));
    const rows = await t.deps.db.selectFrom('executions').select(['id', 'lease_owner']).where('id', 'in', ids).execute();
    expect(rows.filter((row) => row.lease_owner === worker.id)).toHaveLength(64);
    expect(rows.find((row) => row.id === ids[64])!.lease_owner).toBeNull();
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('id', 'in', ids)
      .execute();
    await worker.leave();
  });

  it('names the executions only when their rows would not fit a notification (the worker reads them)', async () => {
    const worker = await fakeWorker(64);
    const big = 'y'.repeat(9_000);
    const res = await t.request('POST', `/api/v1/workflows/${await flow()}/run`, { body: { data: { input: big } } });
    expect(res.status).toBe(202);
    const id = res.body.execution_id as string;
    await until(() => handed(worker.messages).length === 1);
    expect(handed(worker.messages)[0]).toEqual({ i: [id] });
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('id', '=', id)
      .execute();
    await worker.leave();
  });

  it('sends a worker what one commit hands it in as many notifications as its entries need, in order, naming by id only an entry too large alone (migration 0024)', async () => {
    const worker = await fakeWorker(64);
    const template = await handedTemplate(worker);
    const now = new Date().toISOString();
    // Seven entries of a few KB (a notification holds two or three) and one of ~9 KB, in this order.
    const sizes = [2_000, 2_000, 2_000, 9_000, 2_000, 2_000, 2_000, 2_000];
    const rows = sizes.map((size) => pendingCopy(template, now, { body: 'z'.repeat(size) }));
    const entries = rows.map((row) => JSON.stringify({ row, steps: [] }));
    await admitCommitted(rows, now, worker.id, 64);
    const large = rows[3]!.id;
    const small = rows.filter((row) => row.id !== large).map((row) => row.id);
    await until(
      () =>
        handed(worker.messages).flatMap((message) => ('c' in message ? message.c.map((entry) => entry.row.id) : message.i)).length ===
        rows.length,
    );
    const messages = handed(worker.messages);
    await clearHanded(worker, [template.id, ...rows.map((row) => row.id)]);
    // Every notification within the limit; the small entries in their order, each notification
    // as full as the next entry allows (with it, the notification would pass the limit).
    const carried = worker.messages.filter((payload) => payload.includes('"c":['));
    expect(carried.length).toBeGreaterThan(1);
    expect(worker.messages.every((payload) => Buffer.byteLength(payload) <= HAND_OFF_PAYLOAD_BYTES)).toBe(true);
    const chunks = messages.flatMap((message) => ('c' in message ? [message.c.map((entry) => entry.row.id)] : []));
    expect(chunks.flat()).toEqual(small);
    chunks.slice(0, -1).forEach((chunk, index) => {
      const next = entries[rows.findIndex((row) => row.id === chunks[index + 1]![0])]!;
      expect(Buffer.byteLength(carried[index]!) + 1 + Buffer.byteLength(next)).toBeGreaterThan(HAND_OFF_PAYLOAD_BYTES);
    });
    expect(messages.every((message) => 'i' in message || (message.l !== undefined && message.n === now))).toBe(true);
    expect(messages.filter((message) => 'i' in message)).toEqual([{ i: [large] }]);
  });

  it('names executions too large for a notification at most 150 to a notification', async () => {
    const worker = await fakeWorker(1_000);
    const template = await handedTemplate(worker);
    const now = new Date().toISOString();
    const rows = Array.from({ length: HAND_OFF_IDS_PER_NOTIFICATION + 1 }, () =>
      pendingCopy(template, now, { body: 'w'.repeat(HAND_OFF_PAYLOAD_BYTES) }),
    );
    await admitCommitted(rows, now, worker.id, 1_000);
    await until(() => handed(worker.messages).length === 2);
    const ids = rows.map((row) => row.id);
    await clearHanded(worker, [template.id, ...ids]);
    expect(handed(worker.messages)).toEqual([
      { i: ids.slice(0, HAND_OFF_IDS_PER_NOTIFICATION) },
      { i: ids.slice(HAND_OFF_IDS_PER_NOTIFICATION) },
    ]);
  });

  it('hands nothing to a worker whose listening connection is gone (killed, cut off), though it is still announced', async () => {
    const quick = await flow();
    const dead = await fakeWorker(64);
    await dead.die();
    const id = await run(quick);
    expect(await executionRow(t, id)).toMatchObject({ status: 'pending', lease_owner: null });
    await t.deps.db.updateTable('executions').set({ status: 'cancelled', run_at: null }).where('id', '=', id).execute();
    await dead.leave();
  });

  it('a worker runs what it is handed, with no claim of its own; what a worker dying just after the hand-off had is taken over when the short lease expires', async () => {
    const quick = await workflowWith(
      t,
      `Quick ${newId()}`,
      { nodes: [node('hook', 'webhook'), node('a', 'set', { values: { a: 1 } })], edges: [edge('hook', 'a')] },
      { activate: true },
    );
    const dying = await fakeWorker(64);
    const orphan = await run(quick);
    expect((await executionRow(t, orphan)).lease_owner).toBe(dying.id);
    await dying.leave();
    // A live worker with no poll and no timers: only the hand-off can reach it.
    const live = await startWorker(t, engines, { timers: false });
    await until(() => api().knownWorkers().includes(live.cluster!.processId));
    const id = await run(quick);
    await until(async () => (await executionRow(t, id)).status === 'completed');
    expect(await executionRow(t, orphan)).toMatchObject({ status: 'running', lease_owner: dying.id });
    // The dying worker's short lease (1 s) runs out; a claim takes the execution over.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await live.cluster!.requestClaim(true);
    await until(async () => (await executionRow(t, orphan)).status === 'completed');
    engines.splice(engines.indexOf(live), 1);
    await live.stop();
    await until(() => !api().knownWorkers().includes(live.cluster!.processId));
  });

  it('spreads a commit’s executions over the workers, each to the one with the most room', async () => {
    const quick = await flow();
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('status', 'in', ['pending', 'running', 'waiting'])
      .execute();
    const small = await fakeWorker(1);
    const large = await fakeWorker(3);
    // Four deliveries at once: one group commit, most likely; whatever the batches, 3 go to the larger and 1 to the smaller.
    const ids = await Promise.all([0, 1, 2, 3].map(() => run(quick)));
    const rows = await t.deps.db.selectFrom('executions').select(['id', 'lease_owner']).where('id', 'in', ids).execute();
    expect(rows.filter((row) => row.lease_owner === large.id)).toHaveLength(3);
    expect(rows.filter((row) => row.lease_owner === small.id)).toHaveLength(1);
    await until(() => handed(small.messages).length >= 1 && handed(large.messages).length >= 1);
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('id', 'in', ids)
      .execute();
    await small.leave();
    await large.leave();
  });

  it('a worker that has stopped claiming (a drain) gives back what it is handed at once, for the others', async () => {
    const quick = await workflowWith(
      t,
      `Quick ${newId()}`,
      { nodes: [node('hook', 'webhook'), node('a', 'set', { values: { a: 1 } })], edges: [edge('hook', 'a')] },
      { activate: true },
    );
    const draining = await startWorker(t, engines, { timers: false });
    const id = draining.cluster!.processId;
    await until(() => api().knownWorkers().includes(id));
    draining.cluster!.stopClaiming();
    await until(() => !api().knownWorkers().includes(id));
    // Its leave crossed a hand-off: the API process still counts it.
    await notifier().notify(t.deps.db, 'sy_workers', `+${id};64`);
    await until(() => api().knownWorkers().includes(id));
    const execution = await run(quick);
    await until(async () => (await executionRow(t, execution)).lease_owner === null);
    expect(await executionRow(t, execution)).toMatchObject({ status: 'running', lease_expires_at: null });
    const other = await startWorker(t, engines, { timers: false });
    await other.cluster!.requestClaim(true);
    await until(async () => (await executionRow(t, execution)).status === 'completed');
    for (const engine of [draining, other]) {
      engines.splice(engines.indexOf(engine), 1);
      await engine.stop();
    }
    await until(() => !api().knownWorkers().includes(other.cluster!.processId));
    await notifier().notify(t.deps.db, 'sy_workers', `-${id}`);
    await until(() => !api().knownWorkers().includes(id));
  });

  it('hands over the executions a platform event starts (runMany) in the commit with its extra write', async () => {
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('status', 'in', ['pending', 'running', 'waiting'])
      .execute();
    const worker = await fakeWorker(64);
    const workflowIds = [await flow(), await flow()];
    const snapshots = await t.deps.db.selectFrom('workflows').select(['id', 'active_snapshot_id']).where('id', 'in', workflowIds).execute();
    const starts = snapshots.map((row) => ({
      workspaceId: t.workspaces.main,
      workflowId: row.id,
      snapshotId: row.active_snapshot_id!,
      userId: null,
      trigger: { method: 'EVENT', headers: {}, query: {}, body: {} },
    }));
    let marked: string[] = [];
    const started = await t.deps.engine.runMany(starts, async (_trx, ids) => {
      marked = ids;
    });
    const ids = started.map((entry) => entry.execution_id);
    expect(marked).toEqual(ids);
    const rows = await t.deps.db.selectFrom('executions').select(['id', 'status', 'lease_owner']).where('id', 'in', ids).execute();
    expect(rows.map((row) => [row.status, row.lease_owner])).toEqual([
      ['running', worker.id],
      ['running', worker.id],
    ]);
    await until(() => handed(worker.messages).some((message) => 'c' in message && message.c.length === 2));
    await t.deps.db
      .updateTable('executions')
      .set({ status: 'cancelled', run_at: null, lease_owner: null, lease_expires_at: null })
      .where('id', 'in', ids)
      .execute();
    await worker.leave();
  });

  it('answers a respond step that ends the run with one notification, its answer and the end together; values too large for one are read from the row', async () => {
    const live = await startWorker(t, engines, { timers: false });
    await until(() => api().knownWorkers().includes(live.cluster!.processId));
    // What the API process's channel carries, heard on a connection of the test's own.
    const heard: AnswerMessage[] = [];
    const listener = new pg.Client({ connectionString: t.database.url! });
    await listener.connect();
    listener.on('notification', (message) => {
      const answer = parseProcessMessage(message.payload ?? '')?.answer;
      if (answer) heard.push(answer);
    });
    await listener.query(`LISTEN ${answerChannel(api().processId)}`);
    const answersFor = async (id: string) => {
      await until(() => heard.some((answer) => answer.e === id));
      // Answered after every notification committed before it (db/notifier.ts, sync).
      await listener.query('select 1');
      return heard.filter((answer) => answer.e === id);
    };
    try {
      const pad = (n: number) => ({
        nodes: [
          node('pad', 'code', { code: `return { n: input.body.n, pad: 'x'.repeat(${n}) };` }),
          node('reply', 'respond_to_webhook', { status: 201, body: '{{ input }}' }),
        ],
        edges: [edge('hook', 'pad'), edge('pad', 'reply')],
      });
      const small = await webhookWorkflow(t, `Respond last ${newId()}`, { response_mode: 'respond_step' }, pad(3));
      const answered = await deliver(t, small.path, { body: '{"n":1}', headers: { authorization: `Bearer ${small.token}` } });
      expect(answered.status, answered.body).toBe(201);
      expect(answered.json()).toEqual({ n: 1, pad: 'xxx' });
      const id = answered.headers['x-execution-id'] as string;
      const [only, ...more] = await answersFor(id);
      expect(more).toEqual([]);
      expect(only).toMatchObject({ e: id, k: 'b', s: 'completed' });
      expect(JSON.parse(only!.v!)).toMatchObject({ status: 201, body: { n: 1, pad: 'xxx' } });
      expect(JSON.parse(only!.o!)).toMatchObject({ status: 201, body: { n: 1, pad: 'xxx' } });

      const big = await webhookWorkflow(t, `Respond last big ${newId()}`, { response_mode: 'respond_step' }, pad(20_000));
      const bigAnswer = await deliver(t, big.path, { body: '{"n":2}', headers: { authorization: `Bearer ${big.token}` } });
      expect(bigAnswer.status).toBe(201);
      expect(bigAnswer.json()).toEqual({ n: 2, pad: 'x'.repeat(20_000) });
      const bigId = bigAnswer.headers['x-execution-id'] as string;
      expect(await answersFor(bigId)).toEqual([{ e: bigId, k: 'b', s: 'completed' }]);
    } finally {
      await listener.end();
      engines.splice(engines.indexOf(live), 1);
      await live.stop();
      await until(() => !api().knownWorkers().includes(live.cluster!.processId));
    }
  });
});
