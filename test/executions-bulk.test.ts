import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** POST /executions/cancel and /executions/retry: the list filter of GET /executions, acted on. */
describeEachDialect('bulk execution actions', (dialect) => {
  let t: TestApp;
  let waiting: string;
  let otherWaiting: string;
  let failing: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    const pause = { nodes: [node('start', 'webhook'), node('pause', 'wait', { duration_ms: 3_600_000 })], edges: [edge('start', 'pause')] };
    waiting = await workflowWith(t, 'Pausing', pause);
    otherWaiting = await workflowWith(t, 'Pausing too', pause);
    failing = await workflowWith(t, 'Failing', {
      nodes: [node('start', 'webhook'), node('boom', 'code', { code: "throw new Error('boom')" })],
      edges: [edge('start', 'boom')],
    });
  });
  afterAll(() => t.close());

  const statuses = async (ids: string[]) => Promise.all(ids.map(async (id) => (await executionRow(t, id)).status));

  it('cancels every pending, running or waiting execution the filter matches, and only those', async () => {
    const mine = [await runToRest(t, waiting), await runToRest(t, waiting), await runToRest(t, waiting)];
    const others = [await runToRest(t, otherWaiting), await runToRest(t, otherWaiting)];
    expect(await statuses([...mine, ...others])).toEqual(Array(5).fill('waiting'));
    const res = await t.request('POST', '/api/v1/executions/cancel', { body: { data: { filter: { workflow_id: { eq: waiting } } } } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ matched: 3, acted: 3, remaining: 0 });
    expect(await statuses(mine)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(await statuses(others)).toEqual(['waiting', 'waiting']);
    // Nothing left to cancel: a second call matches nothing.
    const again = await t.request('POST', '/api/v1/executions/cancel', { body: { data: { filter: { workflow_id: { eq: waiting } } } } });
    expect(again.body).toEqual({ matched: 0, acted: 0, remaining: 0 });
  });

  it('retries every failed or cancelled execution the filter matches once, each as a new execution linked to it', async () => {
    const failed = [await runToRest(t, failing), await runToRest(t, failing)];
    expect(await statuses(failed)).toEqual(['failed', 'failed']);
    const filter = { workflow_id: { eq: failing } };
    const res = await t.request('POST', '/api/v1/executions/retry', { body: { data: { filter } } });
    expect(res.body).toEqual({ matched: 2, acted: 2, remaining: 0 });
    await t.deps.engine.idle();
    const retries = await t.deps.db
      .selectFrom('executions')
      .select(['retry_of_execution_id', 'status'])
      .where('retry_of_execution_id', 'in', failed)
      .execute();
    expect(retries.map((r) => r.retry_of_execution_id).sort()).toEqual([...failed].sort());
    // The retries failed again, but the originals are retried already: only the retries match.
    const again = await t.request('POST', '/api/v1/executions/retry', { body: { data: { filter } } });
    expect(again.body).toEqual({ matched: 2, acted: 2, remaining: 0 });
    // Each call retries only the failures not retried yet: the newest two, never the originals again.
    const total = async () =>
      Number(
        (
          await t.deps.db
            .selectFrom('executions')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('workflow_id', '=', failing)
            .executeTakeFirstOrThrow()
        ).n,
      );
    await t.deps.engine.idle();
    expect(await total()).toBe(6);
  });

  it('answers 422 pointing into the body for a missing or bad filter, 403 to a read token, and stays in the workspace', async () => {
    const cases: [unknown, string][] = [
      [{ data: {} }, '/data/filter'],
      [{ data: { filter: 'status' } }, '/data/filter'],
      [{ data: { filter: { nope: { eq: '1' } } } }, '/data/filter/nope'],
      [{ data: { filter: { status: { near: 'failed' } } } }, '/data/filter/status/near'],
      [{ data: { filter: {}, limit: 5 } }, '/data/limit'],
    ];
    for (const [body, pointer] of cases) {
      const res = await t.request('POST', '/api/v1/executions/cancel', { body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors[0].source, JSON.stringify(body)).toEqual({ pointer });
    }
    const pending = await runToRest(t, otherWaiting);
    expect((await t.request('POST', '/api/v1/executions/cancel', { token: t.tokens.read, body: { data: { filter: {} } } })).status).toBe(
      403,
    );
    const foreign = await t.request('POST', '/api/v1/executions/cancel', { token: t.tokens.other, body: { data: { filter: {} } } });
    expect(foreign.body).toEqual({ matched: 0, acted: 0, remaining: 0 });
    expect((await executionRow(t, pending)).status).toBe('waiting');
  });
});
