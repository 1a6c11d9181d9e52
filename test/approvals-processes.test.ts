import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTimestampMicros } from '../src/lib/clock.js';
import { TEST_DATABASE_URL, type TestDatabase } from './support/dialects.js';
import { edge, node } from './support/engine-helpers.js';
import { callApi, clusterEnv, processTestSetup, until, type ServeProcess, startCluster } from './support/serve-process.js';

const RUNS = 12;

/**
 * Approvals across real processes on one PostgreSQL: one API process (`--role api`) and two
 * workers. A worker is SIGKILLed while the approvals wait; the decisions, made through the API
 * process (its route and the signed links, some of them twice at once), resume every execution
 * on the surviving worker, each decided once, no step run twice.
 */
describe.skipIf(!TEST_DATABASE_URL)('approvals with one API process and two workers', () => {
  let database: TestDatabase;
  let dataDir: string;
  let api: ServeProcess;
  let workers: ServeProcess[] = [];
  let token: string;

  beforeAll(async () => {
    ({ database, token, dataDir } = await processTestSetup('sy-approvals-'));
    const env = clusterEnv(database, dataDir, 'approval-test-key-approval-test-key-0123');
    ({ api, workers } = await startCluster(env));
  }, 90_000);
  afterAll(async () => {
    await Promise.all([api?.stop(), ...workers.map((w) => w.stop())]);
    await database?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (method: string, url: string, body?: unknown) => callApi(api.address, token, method, url, body);

  const gates = () =>
    database.db
      .selectFrom('execution_steps')
      .select(['id', 'workflow_execution_id', 'status', 'output'])
      .where('node_id', '=', 'gate')
      .where('status', '=', 'waiting')
      .execute();

  it('a worker SIGKILLed while approvals wait loses nothing: every decision resumes its execution once', async () => {
    const created = await call('POST', '/workflows', { data: { name: 'Gated' } });
    const workflowId = created.body.data.id as string;
    const graph = {
      nodes: [
        node('hook', 'webhook'),
        node('gate', 'approval', { message: 'Ship?', timeout_ms: 600_000 }),
        node('yes', 'set', { values: { shipped: true } }),
        node('no', 'set', { values: { shipped: false } }),
      ],
      edges: [edge('hook', 'gate'), edge('gate', 'yes', 'approved'), edge('gate', 'no', 'rejected')],
    };
    expect((await call('PUT', `/workflows/${workflowId}/graph`, { data: { graph, layout: false } })).status).toBe(200);
    expect((await call('POST', `/workflows/${workflowId}/activate`)).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) ids.push((await call('POST', `/workflows/${workflowId}/run`, { data: {} })).body.execution_id);
    const waiting = await until(gates, (rows) => rows.length === RUNS);

    workers[0]!.child.kill('SIGKILL');
    await new Promise((resolve) => workers[0]!.child.once('exit', resolve));

    // Half through the API route, half through the links; every one of them twice at once.
    const answers = await Promise.all(
      waiting.flatMap((row, i) => {
        const output = JSON.parse(row.output!) as { approve_url: string; reject_url: string };
        const decide = () =>
          i % 2 === 0
            ? call('POST', `/executions/${row.workflow_execution_id}/steps/${row.id}/decision`, { data: { decision: 'approve' } })
            : fetch(`${api.address}${new URL(i % 4 === 1 ? output.approve_url : output.reject_url).pathname}`, { method: 'POST' }).then(
                async (res) => ({ status: res.status, body: await res.json() }),
              );
        return [decide(), decide()];
      }),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(RUNS);
    // The API refuses a second decision with 409; a used link is 410.
    expect(statuses.filter((s, i) => s === (Math.floor(i / 2) % 2 === 0 ? 409 : 410))).toHaveLength(RUNS);

    const rows = await until(
      () => database.db.selectFrom('executions').select(['id', 'status', 'finished_at']).where('id', 'in', ids).execute(),
      (list) => list.every((r) => r.status === 'completed'),
    );
    const steps = await database.db
      .selectFrom('execution_steps')
      .select(['workflow_execution_id', 'node_id', 'status'])
      .where('workflow_execution_id', 'in', ids)
      .execute();
    for (const id of ids) {
      const mine = steps.filter((s) => s.workflow_execution_id === id);
      // One record per node: nothing ran twice; the gate left by exactly one port.
      expect(mine.map((s) => s.node_id).sort()).toEqual(['gate', 'hook', 'no', 'yes']);
      expect(mine.filter((s) => s.status === 'completed').length).toBe(3);
    }
    const decisions = await database.db.selectFrom('approval_decisions').selectAll().where('execution_id', 'in', ids).execute();
    expect(decisions).toHaveLength(RUNS);
    // Every decision resumed its execution to its end long before the 10-minute time-out (the
    // API process's decided_at to the worker's finished_at): none waited for a poll or a timer.
    const micros = (at: string | null) => parseTimestampMicros(at ?? '') ?? 0;
    const lags = rows
      .map((r) => (micros(r.finished_at) - micros(decisions.find((d) => d.execution_id === r.id)!.decided_at)) / 1000)
      .sort((a, b) => a - b);
    expect(lags.at(-1)!).toBeLessThan(5_000);

    // One decision at a time, the others idle.
    for (let i = 0; i < 5; i++) ids.push((await call('POST', `/workflows/${workflowId}/run`, { data: {} })).body.execution_id);
    const idle = await until(gates, (list) => list.length === 5);
    for (const row of idle) {
      const answer = await call('POST', `/executions/${row.workflow_execution_id}/steps/${row.id}/decision`, {
        data: { decision: 'approve' },
      });
      expect(answer.status).toBe(200);
      await until(
        () =>
          database.db
            .selectFrom('executions')
            .select(['status', 'finished_at'])
            .where('id', '=', row.workflow_execution_id)
            .executeTakeFirstOrThrow(),
        (r) => r.status === 'completed',
      );
    }
  }, 90_000);
});
