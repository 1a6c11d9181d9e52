import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildDeps, type Deps } from '../src/deps.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from './support/dialects.js';
import { edge, node } from './support/engine-helpers.js';

/**
 * Kills the engine with SIGKILL while a step is in flight, then starts a new engine on the same
 * database: the execution completes, the step that had completed is not run again, and only the
 * step that was in flight runs twice.
 */
describeEachDialect('engine crash recovery', (dialect) => {
  let database: TestDatabase;
  let dataDir: string;
  let server: http.Server;
  let base: string;
  const hits: Record<string, number> = {};
  let holdSlow = true;
  let onSlow: () => void = () => {};

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-crash-'));
    database = await createTestDatabase(dialect, { migrate: true, sqliteFile: true });
    server = http.createServer((req, res) => {
      const name = (req.url ?? '/').slice(1);
      hits[name] = (hits[name] ?? 0) + 1;
      if (name === 'slow' && holdSlow) {
        onSlow();
        return; // never answers: the step stays in flight until the process dies
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name, hit: hits[name] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('completes after a SIGKILL with no completed step run twice', async () => {
    const setup = await buildDeps(
      { databaseUrl: null, dataDir, secretKey: 'test-secret-key-test-secret-key-0123456789', baseUrl: 'http://sy.test' },
      { database: { ...database, close: async () => {} }, timers: false },
    );
    const workspace = await setup.identity.createWorkspace({ name: 'Crash', slug: 'crash', plan: 'pro' });
    const graph = {
      nodes: [
        node('hook', 'webhook'),
        node('first', 'http', { url: `${base}/first` }),
        node('second', 'http', { url: `${base}/slow` }),
        node('third', 'set', { values: { done: '{{ nodes.second.body.name }}' } }),
      ],
      edges: [edge('hook', 'first'), edge('first', 'second'), edge('second', 'third')],
    };
    const actor = { workspaceId: workspace.id, userId: workspace.owner_user_id };
    const workflow = await setup.workflows.create(actor, { values: { name: 'Crash me' }, pointer: (n) => `/data/${n}` });
    await setup.workflows.putGraph(actor, workflow.id, { graph, layout: false });
    await setup.engine.stop();

    const slowReached = new Promise<void>((resolve) => (onSlow = resolve));
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'test/support/engine-child.ts',
        dialect,
        database.url!,
        dataDir,
        workspace.id,
        workspace.owner_user_id,
        workflow.id,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += String(chunk)));
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    await Promise.race([
      slowReached,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`the child never reached the slow step:\n${output}`)), 120_000)),
    ]);
    const { execution_id: executionId } = JSON.parse(output.split('\n')[0]!) as { execution_id: string };
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(hits).toEqual({ first: 1, slow: 1 });
    server.closeAllConnections();

    holdSlow = false;
    const recovered: Deps = await buildDeps(
      {
        databaseUrl: null,
        dataDir,
        secretKey: 'test-secret-key-test-secret-key-0123456789',
        baseUrl: 'http://sy.test',
        httpAllow: ['127.0.0.1'],
      },
      { database: { ...database, close: async () => {} }, timers: false },
    );
    await recovered.engine.start();
    await recovered.engine.idle();
    // On PostgreSQL the dead process's lease must expire first (1 s in the child): the survivor
    // claims the execution on a later pass, never while the lease is alive.
    const statusOf = async () =>
      (await recovered.db.selectFrom('executions').select('status').where('id', '=', executionId).executeTakeFirstOrThrow()).status;
    for (let i = 0; i < 100 && (await statusOf()) !== 'completed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await recovered.engine.runDue();
      await recovered.engine.idle();
    }
    const execution = await recovered.db.selectFrom('executions').selectAll().where('id', '=', executionId).executeTakeFirstOrThrow();
    expect(execution.status).toBe('completed');
    expect(JSON.parse(execution.output!)).toEqual({ done: 'slow' });
    expect(hits).toEqual({ first: 1, slow: 2 });
    const steps = await recovered.db
      .selectFrom('execution_steps')
      .select(['node_id', 'status', 'attempt', 'error'])
      .where('workflow_execution_id', '=', executionId)
      .orderBy('inserted_at')
      .orderBy('id')
      .execute();
    // The request in flight was recorded running before it started: the recovery records that
    // attempt interrupted and runs the next; no completed step runs again.
    expect(steps.map(({ node_id, status, attempt }) => ({ node_id, status, attempt }))).toEqual([
      { node_id: 'hook', status: 'completed', attempt: 1 },
      { node_id: 'first', status: 'completed', attempt: 1 },
      { node_id: 'second', status: 'failed', attempt: 1 },
      { node_id: 'second', status: 'completed', attempt: 2 },
      { node_id: 'third', status: 'completed', attempt: 1 },
    ]);
    expect(JSON.parse(steps[2]!.error!)).toMatchObject({ code: 'interrupted' });
    await recovered.engine.stop();
  }, 240_000);
});
