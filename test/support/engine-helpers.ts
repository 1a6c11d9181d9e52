import { sql, type Kysely } from 'kysely';
import { expect } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import type { TestApp } from './test-app.js';

export interface GraphSpec {
  nodes: Record<string, unknown>[];
  edges: Record<string, unknown>[];
  settings?: Record<string, unknown>;
}

/** Creates a workflow with the graph (layout kept) and returns its id. */
export async function workflowWith(t: TestApp, name: string, graph: GraphSpec, options: { activate?: boolean } = {}): Promise<string> {
  const created = await t.request('POST', '/api/v1/workflows', { body: { data: { name } } });
  const id = created.body.data.id as string;
  const put = await t.request('PUT', `/api/v1/workflows/${id}/graph`, { body: { data: { graph, layout: false } } });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  if (options.activate) expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
  return id;
}

/** Starts a run through the API and waits until the engine has nothing in flight. */
export async function runToRest(t: TestApp, workflowId: string, data: Record<string, unknown> = { draft: true }): Promise<string> {
  const res = await t.request('POST', `/api/v1/workflows/${workflowId}/run`, { body: { data } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  await t.deps.engine.idle();
  return res.body.execution_id as string;
}

/** PostgreSQL: waits until no running execution holds a live lease (a killed process's ran out), on the database's clock. */
export async function leasesExpired(db: Kysely<Database>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from executions where status = 'running' and lease_expires_at > to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.execute(
      db,
    );
    if (Number(rows[0]!.n) === 0) return;
    if (Date.now() > deadline) throw new Error('a lease is still live');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function executionRow(t: TestApp, id: string) {
  return t.deps.db.selectFrom('executions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Step rows in the order they were written, with JSON payloads parsed. */
export async function stepRows(t: TestApp, executionId: string) {
  const rows = await t.deps.db
    .selectFrom('execution_steps')
    .selectAll()
    .where('workflow_execution_id', '=', executionId)
    .orderBy('inserted_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    ...row,
    output: row.output === null ? null : JSON.parse(row.output),
    input: row.input === null ? null : JSON.parse(row.input),
    error: row.error === null ? null : JSON.parse(row.error),
  }));
}

export const node = (id: string, type: string, config: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  id,
  type,
  config,
  position: { x: 0, y: 0 },
  ...extra,
});
export const edge = (source: string, target: string, source_port = 'out') => ({ source, target, source_port });
