import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, type TestDatabase } from './support/dialects.js';
import { callApi, clusterEnv, processTestSetup, startServe, type ServeProcess, until, startCluster } from './support/serve-process.js';
import { edge, node } from './support/engine-helpers.js';

const JSONAPI = 'application/vnd.api+json';

/**
 * Real processes on one PostgreSQL database: one API process (`--role api`, runs no step) and
 * two workers (`--role worker`). Webhooks in every response mode are answered across processes,
 * a cancellation reaches the step running in another process, per-workflow limits hold across
 * the workers, and the work is shared between them.
 */
describe.skipIf(!TEST_DATABASE_URL)('one API process and two workers on one PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let api: ServeProcess;
  let workers: ServeProcess[] = [];
  let token: string;
  let server: http.Server;
  let base: string;
  /** Requests to /gate/<name> wait here until released; /gate counts how many wait at once. */
  const held: http.ServerResponse[] = [];
  let heldMax = 0;
  /** Requests that reached /gate, by URL. */
  const arrived = new Map<string, number>();
  const closedEarly: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url?.startsWith('/gate')) {
        held.push(res);
        heldMax = Math.max(heldMax, held.length);
        arrived.set(req.url, (arrived.get(req.url) ?? 0) + 1);
        const release = () => {
          const index = held.indexOf(res);
          if (index !== -1) held.splice(index, 1);
        };
        res.once('finish', release);
        req.socket.once('close', () => {
          if (!res.writableEnded) closedEarly.push(req.url!);
          release();
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    ({ database, token, dataDir } = await processTestSetup('sy-cluster-'));
    env = clusterEnv(database, dataDir, 'cluster-test-key-cluster-test-key-cluster');
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

  /** A workflow with this graph, active; answers its id and the path and bearer of its webhook node `hook` (when it has one). */
  async function activeWorkflow(
    name: string,
    graph: Record<string, unknown>,
  ): Promise<{ id: string; hookPath: string; hookToken: string }> {
    const created = await call('POST', '/workflows', { data: { name } });
    const id = created.body.data.id as string;
    const put = await call('PUT', `/workflows/${id}/graph`, { data: { graph, layout: false } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect((await call('POST', `/workflows/${id}/activate`)).status).toBe(200);
    const hook = put.body.graph.nodes.find((n: { id: string }) => n.id === 'hook');
    return { id, hookPath: `/webhooks/${hook.config.webhook_id}`, hookToken: put.body.webhook_tokens?.hook };
  }

  async function execution(id: string): Promise<{ status: string; output: unknown; lease_owner: string | null }> {
    const row = await database.db
      .selectFrom('executions')
      .select(['status', 'output', 'lease_owner'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return { status: row.status, output: row.output === null ? null : JSON.parse(row.output), lease_owner: row.lease_owner };
  }

  const deliver = (hook: { hookPath: string; hookToken: string }, body: unknown) =>
    fetch(`${api.address}${hook.hookPath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hook.hookToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('answers webhooks in all three modes across processes, and runs the work on both workers', async () => {
    const shape = (mode: string, extra: Record<string, unknown> = {}) => ({
      nodes: [
        node('hook', 'webhook', { response_mode: mode, ...extra }),
        node('double', 'code', { code: 'return { n: input.body.n * 2 };' }),
        node('reply', 'respond_to_webhook', { status: 201, body: '{{ input }}' }),
      ],
      edges: [edge('hook', 'double'), edge('double', 'reply')],
    });
    const immediate = await activeWorkflow('Immediate', shape('immediate'));
    const ids: string[] = [];
    for (let n = 0; n < 24; n += 1) {
      const answer = await deliver(immediate, { n });
      expect(answer.status).toBe(202);
      ids.push(((await answer.json()) as { execution_id: string }).execution_id);
    }
    const owners = new Set<string | null>();
    for (const [n, id] of ids.entries()) {
      const done = await until(
        () => execution(id),
        (e) => e.status === 'completed',
      );
      expect(done.output).toMatchObject({ status: 201, body: { n: n * 2 } });
      owners.add(done.lease_owner);
    }
    // Neither the API process nor one worker alone ran them all.
    expect(owners.size).toBe(2);

    const lastStep = await activeWorkflow('Last step', shape('last_step'));
    const last = await deliver(lastStep, { n: 5 });
    expect(last.status).toBe(200);
    expect(await last.json()).toMatchObject({ status: 201, body: { n: 10 } });

    const respond = await activeWorkflow('Respond step', shape('respond_step'));
    const answered = await deliver(respond, { n: 21 });
    expect(answered.status).toBe(201);
    expect(await answered.json()).toEqual({ n: 42 });
  }, 90_000);

  it('answers across processes with values too large for a notification (the API process reads them from the row)', async () => {
    // 20,000 characters: well past the 8,000 bytes a notification may carry.
    const big = (mode: string) => ({
      nodes: [
        node('hook', 'webhook', { response_mode: mode }),
        node('pad', 'code', { code: "return { n: input.body.n, pad: 'x'.repeat(20000) };" }),
        node('reply', 'respond_to_webhook', { status: 200, body: '{{ input }}' }),
      ],
      edges: [edge('hook', 'pad'), edge('pad', 'reply')],
    });
    const respond = await activeWorkflow('Big respond', big('respond_step'));
    const answered = await deliver(respond, { n: 1 });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ n: 1, pad: 'x'.repeat(20_000) });
    const lastStep = await activeWorkflow('Big last step', big('last_step'));
    const last = await deliver(lastStep, { n: 2 });
    expect(last.status).toBe(200);
    expect(await last.json()).toMatchObject({ status: 200, body: { n: 2, pad: 'x'.repeat(20_000) } });
  }, 60_000);

  it('answers 504 when the run does not answer in time, and the run goes on in its worker', async () => {
    const slow = await activeWorkflow('Slow', {
      nodes: [
        node('hook', 'webhook', { response_mode: 'last_step', timeout_ms: 300 }),
        node('call', 'http', { url: `${base}/gate/slow` }),
        node('after', 'set', { values: { done: true } }),
      ],
      edges: [edge('hook', 'call'), edge('call', 'after')],
    });
    const answer = await deliver(slow, {});
    expect(answer.status).toBe(504);
    const executionId = answer.headers.get('x-execution-id')!;
    expect(((await answer.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe('webhook_timeout');
    await until(
      async () => held.length,
      (n) => n === 1,
    );
    held[0]!.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    const done = await until(
      () => execution(executionId),
      (e) => e.status === 'completed',
    );
    expect(done.output).toEqual({ done: true });
  }, 60_000);

  it('cancels an execution whose step runs in another process: the step is aborted and nothing runs after it', async () => {
    const hanging = await activeWorkflow('Hanging', {
      nodes: [
        node('hook', 'webhook'),
        node('call', 'http', { url: `${base}/gate/hang`, timeout_ms: 60_000 }),
        node('after', 'set', { values: { ran: true } }),
      ],
      edges: [edge('hook', 'call'), edge('call', 'after')],
    });
    const started = await call('POST', `/workflows/${hanging.id}/run`, { data: {} });
    expect(started.status).toBe(202);
    await until(
      async () => held.length,
      (n) => n === 1,
    );
    const cancelled = await call('POST', `/executions/${started.body.execution_id}/cancel`);
    expect(cancelled.status).toBe(200);
    // The worker holding the request hears the cancellation and aborts it.
    await until(
      async () => closedEarly.filter((url) => url === '/gate/hang').length,
      (n) => n === 1,
      5_000,
    );
    const steps = await database.db
      .selectFrom('execution_steps')
      .select(['node_id', 'status'])
      .where('workflow_execution_id', '=', started.body.execution_id)
      .orderBy('inserted_at')
      .execute();
    expect(steps).toEqual([
      { node_id: 'hook', status: 'completed' },
      { node_id: 'call', status: 'failed' },
    ]);
    expect((await execution(started.body.execution_id)).status).toBe('cancelled');
  }, 60_000);

  it('holds a workflow’s concurrency limit across both workers', async () => {
    heldMax = 0;
    const limited = await activeWorkflow('Limited', {
      nodes: [node('hook', 'webhook'), node('call', 'http', { url: `${base}/gate/limited` })],
      edges: [edge('hook', 'call')],
      settings: { concurrency_limit: 1 },
    });
    const runs: string[] = [];
    for (let i = 0; i < 4; i += 1) runs.push((await call('POST', `/workflows/${limited.id}/run`, { data: {} })).body.execution_id);
    for (let i = 0; i < 4; i += 1) {
      await until(
        async () => [arrived.get('/gate/limited') ?? 0, held.length],
        ([seen, waiting]) => seen === i + 1 && waiting === 1,
      );
      // Give a second claim every chance to break the limit before the gate opens.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(held.length).toBe(1);
      held[0]!.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    }
    for (const id of runs)
      await until(
        () => execution(id),
        (e) => e.status === 'completed',
      );
    expect(heldMax).toBe(1);
  }, 90_000);

  it('an API process runs no step: a delivery waits pending until a worker is up', async () => {
    const quick = await activeWorkflow('Quick', {
      nodes: [node('hook', 'webhook'), node('v', 'set', { values: { ok: true } })],
      edges: [edge('hook', 'v')],
    });
    await Promise.all(workers.map((worker) => worker.stop()));
    const answer = await deliver(quick, {});
    expect(answer.status).toBe(202);
    const { execution_id: id } = (await answer.json()) as { execution_id: string };
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await execution(id)).status).toBe('pending');
    workers = [await startServe({ ...env, SWITCHYARD_ROLE: 'worker' })];
    expect(
      (
        await until(
          () => execution(id),
          (e) => e.status === 'completed',
        )
      ).output,
    ).toEqual({ ok: true });
    // A worker serves health and metrics, not the API.
    expect((await fetch(`${workers[0]!.address}/healthz`)).status).toBe(200);
    expect((await fetch(`${workers[0]!.address}/metrics`)).status).toBe(200);
    const refused = await fetch(`${workers[0]!.address}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('content-type')).toBe(JSONAPI);
  }, 90_000);
});
