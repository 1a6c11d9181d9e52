import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith, type GraphSpec } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * POST /executions/:id/rerun and /replay (run control): a new execution reusing the source's
 * records up to a node, or running its trigger payload again, linked to it.
 */
describeEachDialect('re-run from a step and replay', (dialect) => {
  let t: TestApp;
  let storeId: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    storeId = (await t.request('POST', '/api/v1/stores', { body: { data: { type: 'store', attributes: { name: 'Effects' } } } })).body.data
      .id;
  });
  afterAll(() => t.close());

  /** start -> save (inserts a row: a second insert of the key fails) -> a -> check -> end. */
  const graph = (check: string): GraphSpec => ({
    nodes: [
      node('start', 'webhook'),
      node('save', 'save_to_store', { store_id: storeId, key: '{{ trigger.body.key }}', row: { seen: true }, mode: 'insert' }),
      node('a', 'code', { code: 'return { x: 41 }' }),
      node('check', 'code', { code: check }),
      node('end', 'code', { code: 'return { done: input }' }),
    ],
    edges: [edge('start', 'save'), edge('save', 'a'), edge('a', 'check'), edge('check', 'end')],
  });
  const FAILING = "if (!input.fixed) throw new Error('not fixed'); return input";
  const rerun = (id: string, data: Record<string, unknown>, token?: string) =>
    t.request('POST', `/api/v1/executions/${id}/rerun`, { body: { data }, ...(token ? { token } : {}) });
  const byNode = (rows: Awaited<ReturnType<typeof stepRows>>) => new Map(rows.map((row) => [row.node_id, row]));

  it('reuses every record before the node, runs it and what follows from the live canvas, and repeats no effect', async () => {
    const workflowId = await workflowWith(t, 'Fix and re-run', graph(FAILING));
    const failed = await runToRest(t, workflowId, { draft: true, input: { key: 'k1' } });
    expect((await executionRow(t, failed)).status).toBe('failed');
    const sourceRows = byNode(await stepRows(t, failed));

    // The user fixes the failing node on the canvas and re-runs from it.
    const put = await t.request('PUT', `/api/v1/workflows/${workflowId}/graph`, {
      body: { data: { graph: graph('return { fixed: input.x + 1 }'), layout: false } },
    });
    expect(put.status).toBe(200);
    const res = await rerun(failed, { from_node_id: 'check', draft: true });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(['execution_id']);
    await t.deps.engine.idle();

    const again = res.body.execution_id as string;
    const row = await executionRow(t, again);
    expect(row.status).toBe('completed');
    expect(JSON.parse(row.output!)).toEqual({ done: { fixed: 42 } });
    expect(row).toMatchObject({ rerun_of_execution_id: failed, rerun_from_node_id: 'check', retry_of_execution_id: null });
    const rows = byNode(await stepRows(t, again));
    for (const reused of ['start', 'save', 'a']) {
      expect(rows.get(reused)!.reused_from_step_id, reused).toBe(sourceRows.get(reused)!.id);
      expect(rows.get(reused)!.output).toEqual(sourceRows.get(reused)!.output);
    }
    expect(rows.get('check')!.reused_from_step_id).toBeNull();
    expect(rows.get('end')!.reused_from_step_id).toBeNull();
    // The insert ran once: run again, it would have failed on the existing key.
    const stored = await t.request('GET', `/api/v1/stores/${storeId}/rows?page[count]=true`);
    expect(stored.body.meta.count).toBe(1);

    // The API shows where it came from, and which records it reused.
    const shown = await t.request('GET', `/api/v1/executions/${again}?fields[execution]=status,rerun_of,rerun_from_node_id,replay_of`);
    expect(shown.body.data.attributes).toEqual({ status: 'completed', rerun_of: failed, rerun_from_node_id: 'check', replay_of: null });
    const steps = await t.request('GET', `/api/v1/executions/${again}/steps?fields[execution-step]=node_id,reused`);
    expect(steps.body.data.map((s: { attributes: object }) => s.attributes)).toEqual([
      { node_id: 'start', reused: true },
      { node_id: 'save', reused: true },
      { node_id: 'a', reused: true },
      { node_id: 'check', reused: false },
      { node_id: 'end', reused: false },
    ]);
  });

  it('re-runs the source snapshot without draft, and from the trigger runs everything again', async () => {
    const workflowId = await workflowWith(t, 'Same snapshot', graph(FAILING));
    const failed = await runToRest(t, workflowId, { draft: true, input: { key: 'k2' } });
    const res = await rerun(failed, { from_node_id: 'check' });
    expect(res.status).toBe(201);
    await t.deps.engine.idle();
    const row = await executionRow(t, res.body.execution_id);
    // Same snapshot, same failing code: it fails again at the same node, the effect still once.
    expect(row.status).toBe('failed');
    expect(row.workflow_snapshot_id).toBe((await executionRow(t, failed)).workflow_snapshot_id);
    const retried = byNode(await stepRows(t, res.body.execution_id));
    expect(retried.get('check')!.status).toBe('failed');
    expect(retried.get('save')!.reused_from_step_id).not.toBeNull();
    expect(retried.has('end')).toBe(false);

    const fromTrigger = await rerun(failed, { from_node_id: 'start' });
    expect(fromTrigger.status).toBe(201);
    await t.deps.engine.idle();
    const rows = await stepRows(t, fromTrigger.body.execution_id);
    expect(rows.every((r) => r.reused_from_step_id === null)).toBe(true);
    // The save ran again with the same key: the insert is refused, as a new run's would be.
    expect(rows.find((r) => r.node_id === 'save')!.status).toBe('failed');
  });

  it('reuses a finished loop with its iterations, and re-runs a loop from the loop node', async () => {
    const loop = (after: string): GraphSpec => ({
      nodes: [
        node('start', 'webhook'),
        node('each', 'loop', { items: '{{ [1, 2, 3] }}' }),
        node('double', 'set', { values: { v: '{{ item * 2 }}' } }),
        node('after', 'code', { code: after }),
      ],
      edges: [edge('start', 'each'), edge('each', 'double', 'body'), edge('each', 'after', 'done')],
    });
    const workflowId = await workflowWith(t, 'Loop re-run', loop("throw new Error('later')"));
    const failed = await runToRest(t, workflowId);
    await t.request('PUT', `/api/v1/workflows/${workflowId}/graph`, {
      body: { data: { graph: loop('return { sum: input.reduce((a, r) => a + r.v, 0) }'), layout: false } },
    });
    const res = await rerun(failed, { from_node_id: 'after', draft: true });
    await t.deps.engine.idle();
    const row = await executionRow(t, res.body.execution_id);
    expect(row.status).toBe('completed');
    expect(JSON.parse(row.output!)).toEqual({ sum: 12 });
    const rows = await stepRows(t, res.body.execution_id);
    expect(rows.map((r) => [r.node_id, r.iter_index, r.reused_from_step_id !== null])).toEqual([
      ['start', null, true],
      ['double', 0, true],
      ['double', 1, true],
      ['double', 2, true],
      ['each', null, true],
      ['after', null, false],
    ]);

    // From the loop node: its iterations run again, the trigger is reused.
    const fromLoop = await rerun(failed, { from_node_id: 'each', draft: true });
    await t.deps.engine.idle();
    const again = await stepRows(t, fromLoop.body.execution_id);
    expect(again.filter((r) => r.reused_from_step_id !== null).map((r) => r.node_id)).toEqual(['start']);
    expect(again.filter((r) => r.node_id === 'double')).toHaveLength(3);
    expect((await executionRow(t, fromLoop.body.execution_id)).status).toBe('completed');
  });

  it('answers 422 with a pointer for an unknown node, a loop body node, a missing upstream record and bad members', async () => {
    const workflowId = await workflowWith(t, 'Refusals', {
      nodes: [
        node('start', 'webhook'),
        node('boom', 'code', { code: "throw new Error('boom')" }),
        node('after', 'code', { code: 'return input' }),
        node('each', 'loop', { items: '{{ [1, 2] }}' }),
        node('inner', 'code', { code: 'return input' }),
      ],
      edges: [edge('start', 'boom'), edge('boom', 'after'), edge('start', 'each'), edge('each', 'inner', 'body')],
    });
    const failed = await runToRest(t, workflowId);
    expect((await executionRow(t, failed)).status).toBe('failed');
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ from_node_id: 'nope' }, '/data/from_node_id', /not in the graph/],
      [{ from_node_id: 'inner' }, '/data/from_node_id', /inside the body of loop "each"/],
      [{ from_node_id: 'after' }, '/data/from_node_id', /"boom", upstream of "after", has no completed record/],
      [{}, '/data/from_node_id', /required/],
      [{ from_node_id: 'boom', draft: 'yes' }, '/data/draft', /boolean/],
      [{ from_node_id: 'boom', extra: 1 }, '/data/extra', /unknown member/],
    ];
    for (const [data, pointer, detail] of cases) {
      const res = await rerun(failed, data);
      expect(res.status, JSON.stringify(data)).toBe(422);
      expect(res.body.errors[0].source.pointer, JSON.stringify(data)).toBe(pointer);
      expect(res.body.errors[0].detail).toMatch(detail);
    }
    // A node that failed can be re-run from itself: its upstream completed.
    expect((await rerun(failed, { from_node_id: 'boom' })).status).toBe(201);
    await t.deps.engine.idle();
  });

  it('re-runs a waiting execution from the records it finished; refuses a read token (403) and another workspace (404)', async () => {
    const pausing = await workflowWith(t, 'Pausing', {
      nodes: [node('start', 'webhook'), node('pause', 'wait', { duration_ms: 3_600_000 }), node('after', 'set', { values: { ok: true } })],
      edges: [edge('start', 'pause'), edge('pause', 'after')],
    });
    const waiting = await runToRest(t, pausing);
    expect((await executionRow(t, waiting)).status).toBe('waiting');
    // The wait has not finished: re-run from after it is refused, from it is taken.
    const after = await rerun(waiting, { from_node_id: 'after' });
    expect(after.status).toBe(422);
    expect(after.body.errors[0].detail).toMatch(/"pause", upstream of "after", has no completed record/);
    const fromPause = await rerun(waiting, { from_node_id: 'pause' });
    expect(fromPause.status).toBe(201);
    await t.deps.engine.idle();
    const rows = await stepRows(t, fromPause.body.execution_id);
    expect(rows.map((r) => [r.node_id, r.reused_from_step_id !== null])).toEqual([
      ['start', true],
      ['pause', false],
    ]);
    expect((await rerun(waiting, { from_node_id: 'pause' }, t.tokens.read)).status).toBe(403);
    for (const route of ['rerun', 'replay']) {
      const foreign = await t.request('POST', `/api/v1/executions/${waiting}/${route}`, {
        token: t.tokens.other,
        body: { data: { from_node_id: 'pause' } },
      });
      expect(foreign.status, route).toBe(404);
    }
    expect((await rerun('not-an-id', { from_node_id: 'pause' })).status).toBe(404);
    const replayed = await t.request('POST', `/api/v1/executions/${waiting}/replay`);
    expect(replayed.status).toBe(201);
    for (const id of [waiting, fromPause.body.execution_id, replayed.body.execution_id])
      await t.request('POST', `/api/v1/executions/${id}/cancel`);
  });

  it('replays the trigger payload on the same snapshot, or a new input in its body, linked by replay_of', async () => {
    const workflowId = await workflowWith(t, 'Echo', {
      nodes: [node('start', 'webhook'), node('echo', 'code', { code: 'return { body: trigger.body, method: trigger.method }' })],
      edges: [edge('start', 'echo')],
    });
    const first = await runToRest(t, workflowId, { draft: true, input: { n: 1 } });
    const replay = await t.request('POST', `/api/v1/executions/${first}/replay`);
    expect(replay.status, JSON.stringify(replay.body)).toBe(201);
    const edited = await t.request('POST', `/api/v1/executions/${first}/replay`, { body: { data: { input: { n: 2 } } } });
    expect(edited.status).toBe(201);
    await t.deps.engine.idle();
    const same = await executionRow(t, replay.body.execution_id);
    expect(same).toMatchObject({ replay_of_execution_id: first, status: 'completed' });
    expect(same.workflow_snapshot_id).toBe((await executionRow(t, first)).workflow_snapshot_id);
    expect(JSON.parse(same.output!)).toEqual({ body: { n: 1 }, method: 'RUN' });
    expect(JSON.parse((await executionRow(t, edited.body.execution_id)).output!)).toEqual({ body: { n: 2 }, method: 'RUN' });

    // draft: the live canvas, changed since.
    await t.request('PUT', `/api/v1/workflows/${workflowId}/graph`, {
      body: {
        data: {
          graph: { nodes: [node('start', 'webhook'), node('echo', 'code', { code: 'return { v: 2 }' })], edges: [edge('start', 'echo')] },
          layout: false,
        },
      },
    });
    const live = await t.request('POST', `/api/v1/executions/${first}/replay`, { body: { data: { draft: true } } });
    await t.deps.engine.idle();
    expect(JSON.parse((await executionRow(t, live.body.execution_id)).output!)).toEqual({ v: 2 });
    const bad = await t.request('POST', `/api/v1/executions/${first}/replay`, { body: { data: { draft: 1 } } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toBe('/data/draft');
    expect((await t.request('POST', `/api/v1/executions/${first}/replay`, { token: t.tokens.read })).status).toBe(403);
  });
});
