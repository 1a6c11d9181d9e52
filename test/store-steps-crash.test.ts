import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../src/lib/clock.js';
import { IdentityService } from '../src/services/identity/identity-service.js';
import { createTestDatabase, describeEachDialect, type TestDatabase } from './support/dialects.js';
import { startServe, type ServeProcess } from './support/serve-process.js';

const JSONAPI = 'application/vnd.api+json';
const ITEMS = 1000;

/**
 * SIGKILL of a `serve` process while a workflow saves rows in a loop: the row and the step's
 * completion commit in one transaction, so right after the kill the completed save_to_store
 * steps and the rows are the same set, and after a restart finishes the run each key was
 * written by exactly one completed step.
 */
describeEachDialect('store steps across a crash', (dialect) => {
  let database: TestDatabase;
  let env: Record<string, string | undefined>;
  let token: string;
  let serve: ServeProcess | null = null;
  let tempDir: string | null = null;

  beforeAll(async () => {
    database = await createTestDatabase(dialect, { migrate: true, sqliteFile: true });
    const identity = new IdentityService(database.db, systemClock);
    await identity.createWorkspace({ name: 'Crash', slug: 'crash', plan: 'pro', ownerEmail: 'crash@example.test' });
    token = (await identity.createToken({ workspaceSlug: 'crash', scope: 'build' })).token;
    env = {
      DATABASE_URL: dialect === 'postgres' ? database.url! : undefined,
      // SQLite: the serve process opens the test database's file in its data directory.
      SWITCHYARD_DATA_DIR:
        dialect === 'sqlite' ? path.dirname(database.url!) : (tempDir = mkdtempSync(path.join(os.tmpdir(), 'sy-store-crash-'))),
      SWITCHYARD_SECRET_KEY: 'store-crash-test-key-store-crash-test-key',
      SWITCHYARD_LOG_LEVEL: 'warn',
      // The dead process's lease (PostgreSQL) expires soon, so the restarted one takes the run over.
      SWITCHYARD_LEASE_MS: '1000',
      SWITCHYARD_HEARTBEAT_MS: '300',
      SWITCHYARD_POLL_MS: '200',
    };
  }, 60_000);
  afterAll(async () => {
    await serve?.stop();
    await database.close();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  });

  async function call(method: string, url: string, body?: unknown) {
    const answer = await fetch(`${serve!.address}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': JSONAPI }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: answer.status, body: (await answer.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  /** Keys of the completed save steps of the execution, and keys of the store's rows (with their writer). */
  async function snapshot(executionId: string, storeId: string) {
    const steps = await database.db
      .selectFrom('execution_steps')
      .select(['output', 'status'])
      .where('workflow_execution_id', '=', executionId)
      .where('node_id', '=', 'save')
      .execute();
    const completed = steps.filter((s) => s.status === 'completed').map((s) => (JSON.parse(s.output!) as { key: string }).key);
    const rows = await database.db.selectFrom('store_rows').select(['key', 'execution_id']).where('store_id', '=', storeId).execute();
    return { completed, rows };
  }

  it('keeps rows and completed steps in step through a SIGKILL and a restart', async () => {
    serve = await startServe(env);
    const store = await call('POST', '/api/v1/stores', {
      data: { name: 'Crash rows', row_cap: 100_000, schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
    });
    expect(store.status).toBe(201);
    const storeId = store.body.data.id as string;
    const workflow = await call('POST', '/api/v1/workflows', { data: { name: 'Writer' } });
    const workflowId = workflow.body.data.id as string;
    const graph = {
      nodes: [
        { id: 'hook', type: 'webhook', config: {}, position: { x: 0, y: 0 } },
        { id: 'each', type: 'loop', config: { items: '{{ trigger.body.items }}' }, position: { x: 0, y: 0 } },
        {
          id: 'save',
          type: 'save_to_store',
          config: { store_id: storeId, key: '{{ item }}', row: { n: '{{ index }}' }, mode: 'insert' },
          position: { x: 0, y: 0 },
        },
      ],
      edges: [
        { source: 'hook', target: 'each', source_port: 'out' },
        { source: 'each', target: 'save', source_port: 'body' },
      ],
    };
    expect((await call('PUT', `/api/v1/workflows/${workflowId}/graph`, { data: { graph, layout: false } })).status).toBe(200);
    const items = Array.from({ length: ITEMS }, (_, i) => `key-${i}`);
    const started = await call('POST', `/api/v1/workflows/${workflowId}/run`, { data: { draft: true, input: { items } } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const executionId = started.body.execution_id as string;

    // Kill it in the middle of the loop.
    for (let i = 0; i < 600; i += 1) {
      const { rows } = await snapshot(executionId, storeId);
      if (rows.length >= 50) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    serve.child.kill('SIGKILL');
    await new Promise((resolve) => serve!.child.once('exit', resolve));
    serve = null;

    const killed = await snapshot(executionId, storeId);
    expect(killed.rows.length).toBeGreaterThanOrEqual(50);
    expect(killed.rows.length, 'the kill came before the loop ended').toBeLessThan(ITEMS);
    expect(killed.rows.map((r) => r.key).sort()).toEqual([...killed.completed].sort());

    serve = await startServe(env);
    let status = '';
    for (let i = 0; i < 1200 && status !== 'completed' && status !== 'failed'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await database.db.selectFrom('executions').select('status').where('id', '=', executionId).executeTakeFirstOrThrow()).status;
    }
    expect(status).toBe('completed');
    const done = await snapshot(executionId, storeId);
    // Each key once: an insert that ran twice would have failed with row_exists.
    expect(done.completed.length).toBe(ITEMS);
    expect(new Set(done.completed).size).toBe(ITEMS);
    expect(done.rows.map((r) => r.key).sort()).toEqual([...items].sort());
    expect(done.rows.every((r) => r.execution_id === executionId)).toBe(true);
  }, 240_000);
});
