import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, type TestDatabase } from './support/dialects.js';
import { callApi, clusterEnv, processTestSetup, startServe, until, type ServeProcess, startCluster } from './support/serve-process.js';
import { edge, node } from './support/engine-helpers.js';

/**
 * Run control across real processes on one PostgreSQL: one API process and two workers. A
 * re-run is created by the API process with its reused records in one commit and run by a
 * worker; both workers are SIGKILLed while its first new step is in flight, and a fresh worker
 * takes it up after the lease runs out: it completes, no reused step runs, no record is doubled.
 */
describe.skipIf(!TEST_DATABASE_URL)('run control with an API process and workers on one PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let api: ServeProcess;
  let workers: ServeProcess[] = [];
  let token: string;
  let server: http.Server;
  let base: string;
  const hits = new Map<string, number>();
  const held: http.ServerResponse[] = [];
  let holding = true;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const name = req.url ?? '/';
      hits.set(name, (hits.get(name) ?? 0) + 1);
      if (name === '/gate' && holding) {
        held.push(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ({ database, token, dataDir } = await processTestSetup('sy-run-control-'));
    env = clusterEnv(database, dataDir, 'run-control-key-run-control-key-run-control');
    ({ api, workers } = await startCluster(env));
  }, 90_000);
  afterAll(async () => {
    for (const res of held.splice(0)) res.end('{}');
    await Promise.all([api?.stop(), ...workers.map((w) => w.stop())]);
    server.closeAllConnections();
    server.close();
    await database?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (method: string, url: string, body?: unknown) => callApi(api.address, token, method, url, body);

  const status = async (id: string) =>
    (await database.db.selectFrom('executions').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
  const steps = (id: string) =>
    database.db
      .selectFrom('execution_steps')
      .select(['node_id', 'status', 'reused_from_step_id'])
      .where('workflow_execution_id', '=', id)
      .orderBy('inserted_at')
      .execute();

  it('a re-run whose workers are SIGKILLed mid-step completes on a new worker, repeating no reused step', async () => {
    const graph = (second: Record<string, unknown>) => ({
      nodes: [
        node('hook', 'webhook'),
        node('first', 'http', { url: `${base}/first` }),
        second,
        node('third', 'set', { values: { ok: true } }),
      ],
      edges: [edge('hook', 'first'), edge('first', 'second'), edge('second', 'third')],
    });
    const created = await call('POST', '/workflows', { data: { name: 'Re-run across processes' } });
    const workflowId = created.body.data.id as string;
    expect(
      (
        await call('PUT', `/workflows/${workflowId}/graph`, {
          data: { graph: graph(node('second', 'code', { code: "throw new Error('broken')" })), layout: false },
        })
      ).status,
    ).toBe(200);
    const source = (await call('POST', `/workflows/${workflowId}/run`, { data: { draft: true } })).body.execution_id as string;
    await until(
      () => status(source),
      (s) => s === 'failed',
    );
    expect(hits.get('/first')).toBe(1);

    // The fix: the second step now calls the gate, which holds the request.
    expect(
      (
        await call('PUT', `/workflows/${workflowId}/graph`, {
          data: { graph: graph(node('second', 'http', { url: `${base}/gate` })), layout: false },
        })
      ).status,
    ).toBe(200);
    const rerun = await call('POST', `/executions/${source}/rerun`, { data: { from_node_id: 'second', draft: true } });
    expect(rerun.status, JSON.stringify(rerun.body)).toBe(201);
    const id = rerun.body.execution_id as string;
    await until(
      async () => hits.get('/gate') ?? 0,
      (n) => n === 1,
    );
    for (const worker of workers) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.stop()));
    holding = false;
    for (const res of held.splice(0)) res.destroy();
    workers = [await startServe({ ...env, SWITCHYARD_ROLE: 'worker' })];

    await until(
      () => status(id),
      (s) => s === 'completed',
    );
    // The reused steps ran once, in the source; the step in flight at the kill ran again.
    expect(hits.get('/first')).toBe(1);
    expect(hits.get('/gate')).toBe(2);
    const rows = await steps(id);
    expect(rows.filter((r) => r.reused_from_step_id !== null).map((r) => r.node_id)).toEqual(['hook', 'first']);
    expect(
      rows
        .filter((r) => r.status === 'completed')
        .map((r) => r.node_id)
        .sort(),
    ).toEqual(['first', 'hook', 'second', 'third']);
    expect(rows.filter((r) => r.node_id === 'hook' || r.node_id === 'first')).toHaveLength(2);
  }, 90_000);
});
