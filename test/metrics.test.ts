import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { countQueue } from '../src/store/queue-depth.js';
import { describeEachDialect } from './support/dialects.js';
import { parsePrometheusText, sampleValue, type Sample } from './support/prometheus-text.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { deliver, webhookWorkflow } from './support/webhook-helpers.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const NOW = '2026-11-01T00:00:00.000000Z';

describeEachDialect('GET /metrics', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  async function scrape(): Promise<Sample[]> {
    const answer = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const { samples, invalid } = parsePrometheusText(answer.body);
    expect(invalid).toEqual([]);
    return samples;
  }

  it('answers the Prometheus text format without a token, every series named switchyard_', async () => {
    const samples = await scrape();
    expect(samples.length).toBeGreaterThan(20);
    expect(samples.filter((s) => !s.name.startsWith('switchyard_')).map((s) => s.name)).toEqual([]);
    for (const name of [
      'switchyard_executions_started_total',
      'switchyard_lease_expiries_total',
      'switchyard_takeovers_total',
      'switchyard_process_resident_memory_bytes',
    ]) {
      expect(samples.map((s) => s.name)).toContain(name);
    }
  });

  it('counts requests by method, route pattern and status, and webhook answers by status', async () => {
    const before = await scrape();
    const created = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Measured' } } });
    for (let i = 0; i < 2; i += 1) expect((await t.request('GET', `/api/v1/workflows/${created.body.data.id}`)).status).toBe(200);
    expect((await t.request('GET', '/api/v1/workflows/00000000-0000-7000-8000-000000000000')).status).toBe(404);
    const hook = await webhookWorkflow(t, 'Measured hook', { verification: { method: 'none' } });
    expect((await deliver(t, hook.path, { body: '{}' })).status).toBe(202);
    expect((await deliver(t, '/webhooks/00000000-0000-7000-8000-000000000000', { body: '{}' })).status).toBe(404);
    expect((await deliver(t, '/webhooks/not/a/webhook', { body: '{}' })).status).toBe(404);
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    const http = 'switchyard_http_request_duration_seconds_count';
    expect(moved(http, { method: 'GET', route: '/api/v1/workflows/:id', status: '200' })).toBe(2);
    expect(moved(http, { method: 'GET', route: '/api/v1/workflows/:id', status: '404' })).toBe(1);
    expect(moved(http, { method: 'POST', route: '/api/v1/workflows', status: '201' })).toBe(2);
    expect(moved(http, { method: 'POST', route: '/webhooks/:webhook_id', status: '202' })).toBe(1);
    expect(moved(http, { method: 'POST', route: '/webhooks/:webhook_id', status: '404' })).toBe(1);
    expect(moved('switchyard_webhook_answers_total', { status: '202' })).toBe(1);
    expect(moved('switchyard_webhook_answers_total', { status: '404' })).toBe(2);
    // The scrape before this one is counted too: the metrics route is a route like any other.
    expect(moved(http, { method: 'GET', route: '/metrics', status: '200' })).toBe(1);
  });

  it('carries no id in any label value, whatever URLs were asked', async () => {
    await t.request('GET', '/api/v1/executions/0190a5e0-0000-7000-8000-00000000abcd');
    await t.request('GET', '/api/v1/no/such/0190a5e0-0000-7000-8000-00000000abcd/route');
    await deliver(t, '/webhooks/0190a5e0-0000-7000-8000-00000000abcd', { body: '{}' });
    const samples = await scrape();
    const values = samples.flatMap((s) => Object.values(s.labels));
    expect(values.filter((value) => UUID.test(value))).toEqual([]);
    expect(values.filter((value) => value.includes('?'))).toEqual([]);
    expect(
      sampleValue(samples, 'switchyard_http_request_duration_seconds_count', { method: 'GET', route: '(unmatched)', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('reports the queue depth by status from the database, counting each queued execution once', async () => {
    const row = (id: string, status: string, runAt: string | null) => ({
      id,
      workspace_id: t.workspaces.main,
      workflow_id: 'w',
      workflow_snapshot_id: 's',
      status,
      call_depth: 0,
      inserted_at: NOW,
      updated_at: NOW,
      run_at: runAt,
    });
    // Runs of the earlier tests end first; on PostgreSQL the app's engine would claim these
    // hand-made rows: it looks away meanwhile.
    await t.deps.engine.idle();
    t.deps.engine.cluster?.stopClaiming();
    await t.deps.db
      .insertInto('executions')
      .values([
        row('q1', 'pending', NOW),
        row('q2', 'pending', NOW),
        row('q3', 'waiting', NOW),
        row('q4', 'waiting', null),
        row('q5', 'running', null),
        row('q6', 'running', NOW),
        row('q7', 'completed', null),
        row('q8', 'failed', null),
      ] as never)
      .execute();
    expect(await countQueue(t.deps.db)).toEqual({ pending: 2, waiting: 1, running: 2 });
    const samples = await scrape();
    expect(sampleValue(samples, 'switchyard_queue_depth', { status: 'pending' })).toBe(2);
    expect(sampleValue(samples, 'switchyard_queue_depth', { status: 'waiting' })).toBe(1);
    expect(sampleValue(samples, 'switchyard_queue_depth', { status: 'running' })).toBe(2);
    await t.deps.db.deleteFrom('executions').where('id', 'in', ['q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7', 'q8']).execute();
    t.deps.engine.cluster?.resumeClaiming();
  });

  it('counts the queue through the partial indexes of the queue, never the whole table', async () => {
    const query = sql.raw(
      "select status, count(*) as n from executions where run_at is not null group by status union all select 'running' as status, count(*) as n from executions where status = 'running' and run_at is null",
    );
    let plan: string;
    if (dialect === 'postgres') {
      plan = await t.deps.db.connection().execute(async (db) => {
        // As on a large table: the planner may not scan it whole.
        await sql`set enable_seqscan = off`.execute(db);
        try {
          return (await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(db)).rows.map((r) => r['QUERY PLAN']).join('\n');
        } finally {
          await sql`reset enable_seqscan`.execute(db);
        }
      });
    } else {
      plan = (await sql<{ detail: string }>`explain query plan ${query}`.execute(t.deps.db)).rows.map((r) => r.detail).join('\n');
    }
    expect(plan).toContain('executions_due_idx');
    // Either partial index of running executions serves the second half (PostgreSQL also has
    // the claims' executions_lease_idx, migration 0007).
    expect(plan).toMatch(/executions_running_idx|executions_lease_idx/);
    expect(plan).not.toMatch(/Seq Scan|SCAN executions$/m);
  });
});

describeEachDialect('GET /metrics with SWITCHYARD_METRICS_TOKEN', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { metricsToken: 'scrape-token-0123456789' });
  });
  afterAll(() => t.close());

  it('refuses a scrape without the token, or with another, as a JSON:API 401', async () => {
    for (const authorization of [
      undefined,
      'Bearer scrape-token-012345678',
      'Bearer scrape-token-0123456789x',
      `Bearer ${t.tokens.build}`,
      'Basic c2NyYXBlOnRva2Vu',
    ]) {
      const answer = await t.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      expect(answer.statusCode).toBe(401);
      expect(answer.headers['content-type']).toBe('application/vnd.api+json');
      expect(answer.headers['www-authenticate']).toBe('Bearer');
      const body = JSON.parse(answer.body);
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]).toMatchObject({ status: '401', code: 'unauthorized', title: 'Unauthorized' });
      expect(answer.body).not.toContain('switchyard_');
    }
  });

  it('answers with the token', async () => {
    const answer = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-token-0123456789' } });
    expect(answer.statusCode).toBe(200);
    expect(parsePrometheusText(answer.body).invalid).toEqual([]);
    expect(answer.body).toContain('switchyard_http_request_duration_seconds_bucket{');
  });
});
