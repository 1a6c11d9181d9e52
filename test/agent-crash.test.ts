import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildDeps, type Deps } from '../src/deps.js';
import { describeEachDialect } from './support/dialects.js';
import { edge, leasesExpired, node, workflowWith } from './support/engine-helpers.js';
import { openAiCompletion, startFakeProvider, type FakeProvider } from './support/fake-provider.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Kills the engine with SIGKILL in the middle of an agent loop: the first model turn and an
 * HTTP tool call have completed, and a workflow tool's child execution is in flight. A new
 * engine on the same database finishes the run: no completed model call or tool call is made
 * again (counted at the fake provider and the tool server), the agent waits for the same child
 * execution instead of starting another, and the memory gets the exchange exactly once.
 */
describeEachDialect('agent crash recovery', (dialect) => {
  let t: TestApp;
  let provider: FakeProvider;
  let dataDir: string;
  let server: http.Server;
  let base: string;
  const hits: Record<string, number> = {};
  let holdSlow = true;
  let onSlow: () => void = () => {};

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-agent-crash-'));
    t = await createTestApp(dialect, { sqliteFile: true });
    provider = await startFakeProvider();
    server = http.createServer((req, res) => {
      const name = (req.url ?? '/').slice(1);
      hits[name] = (hits[name] ?? 0) + 1;
      if (name === 'slow' && holdSlow) {
        onSlow();
        return; // never answers: the child's step stays in flight until the process dies
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name, hit: hits[name] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await provider.close();
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes after a SIGKILL without repeating a completed model call or tool call, re-attaching to the same child', async () => {
    const connection = (
      await t.request('POST', '/api/v1/connections', {
        body: {
          data: {
            type: 'connection',
            attributes: { provider: 'openai_compatible', name: 'Local', base_url: provider.openAiBase, api_key: 'sk-crash-test-key-000' },
          },
        },
      })
    ).body.data.id as string;
    const memory = (await t.request('POST', '/api/v1/memories', { body: { data: { type: 'memory', attributes: { name: 'Chat' } } } })).body
      .data.id as string;
    const callee = await workflowWith(t, 'Slow greeter', {
      nodes: [node('hook', 'webhook'), node('fetch', 'http', { url: `${base}/slow` })],
      edges: [edge('hook', 'fetch')],
    });
    const workflow = await workflowWith(t, 'Crashing agent', {
      nodes: [
        node('hook', 'webhook'),
        node('agent', 'agent', {
          connection_id: connection,
          model: 'fake-model',
          prompt: 'Greet Ada and check the weather.',
          memory_id: memory,
          session_key: 'ada',
          tools: [
            {
              type: 'http',
              name: 'weather',
              description: 'Weather',
              method: 'GET',
              url: `${base}/weather`,
              input_schema: { type: 'object' },
            },
            { type: 'workflow', name: 'greet', description: 'Greets', workflow_id: callee, input_schema: { type: 'object' } },
          ],
        }),
      ],
      edges: [edge('hook', 'agent')],
    });
    provider.script(
      'chat',
      {
        body: openAiCompletion({
          toolCalls: [
            { id: 'w', name: 'weather', arguments: {} },
            { id: 'g', name: 'greet', arguments: { name: 'Ada' } },
          ],
        }),
      },
      { body: openAiCompletion({ text: 'Hello Ada, it is sunny.' }) },
    );
    await t.deps.engine.stop();

    const slowReached = new Promise<void>((resolve) => (onSlow = resolve));
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'test/support/engine-child.ts',
        dialect,
        t.database.url!,
        dataDir,
        t.workspaces.main,
        (await t.deps.db.selectFrom('workspaces').select('owner_user_id').where('id', '=', t.workspaces.main).executeTakeFirstOrThrow())
          .owner_user_id,
        workflow,
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
    expect(hits).toEqual({ weather: 1, slow: 1 });
    expect(provider.received('chat')).toHaveLength(1);
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
      { database: { ...t.database, close: async () => {} }, timers: false },
    );
    // On PostgreSQL the dead process's leases (1 s in the child) must run out before the survivor
    // starts: the agent's workflow tool waits in process for its child, so a survivor that took
    // the parent first would wait, in idle(), for a child only a later claim can take over.
    if (dialect === 'postgres') await leasesExpired(recovered.db);
    await recovered.engine.start();
    await recovered.engine.idle();
    const statusOf = async () =>
      (await recovered.db.selectFrom('executions').select('status').where('id', '=', executionId).executeTakeFirstOrThrow()).status;
    for (let i = 0; i < 150 && (await statusOf()) !== 'completed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await recovered.engine.runDue();
      await recovered.engine.idle();
    }
    const execution = await recovered.db.selectFrom('executions').selectAll().where('id', '=', executionId).executeTakeFirstOrThrow();
    expect(execution.status, execution.error ?? '').toBe('completed');
    expect(JSON.parse(execution.output!)).toMatchObject({
      text: 'Hello Ada, it is sunny.',
      tool_calls: [
        { name: 'weather', is_error: false },
        { name: 'greet', is_error: false, result: { status: 200, body: { name: 'slow' } } },
      ],
    });
    // Turn 0 was asked once, turn 1 once; the HTTP tool ran once; only the child's own request in flight ran again.
    expect(provider.received('chat')).toHaveLength(2);
    expect(hits).toEqual({ weather: 1, slow: 2 });
    const children = await recovered.db
      .selectFrom('executions')
      .select(['id', 'status'])
      .where('parent_execution_id', '=', executionId)
      .execute();
    expect(children.map((c) => c.status)).toEqual(['completed']);
    const steps = await recovered.db
      .selectFrom('execution_steps')
      .select(['node_id', 'status', 'attempt', 'kind', 'iter_index', 'error'])
      .where('workflow_execution_id', '=', executionId)
      .where('node_id', '=', 'agent')
      .orderBy('inserted_at')
      .orderBy('id')
      .execute();
    expect(steps.filter((s) => s.kind === 'agent').map((s) => [s.status, s.attempt])).toEqual([
      ['failed', 1],
      ['completed', 2],
    ]);
    expect(JSON.parse(steps.find((s) => s.kind === 'agent')!.error!)).toMatchObject({ code: 'interrupted' });
    expect(
      steps
        .filter((s) => s.kind !== 'agent')
        .map((s) => [s.kind, s.iter_index, s.status])
        .sort(),
    ).toEqual([
      ['model_call', 0, 'completed'],
      ['model_call', 1, 'completed'],
      ['tool_call', 0, 'completed'],
      ['tool_call', 0, 'completed'],
    ]);
    const messages = await recovered.db
      .selectFrom('memory_messages')
      .select(['role', 'content'])
      .where('memory_id', '=', memory)
      .orderBy('position')
      .execute();
    expect(messages).toEqual([
      { role: 'user', content: 'Greet Ada and check the weather.' },
      { role: 'assistant', content: 'Hello Ada, it is sunny.' },
    ]);
    await recovered.engine.stop();
  }, 240_000);
});
