import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionsTable, ExecutionStepsTable } from '../src/db/schema.js';
import { newId } from '../src/lib/ids.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const UNKNOWN = '0190f2a0-0000-7000-8000-000000000000';
const at = (second: number) => `2026-11-01T00:00:${String(second).padStart(2, '0')}.000000Z`;
const EXECUTION_DEFAULTS = ['finished_at', 'inserted_at', 'started_at', 'status', 'triggered_by_step_id', 'workflow_id'];
const STEP_DEFAULTS = [
  'attempt',
  'duration_ms',
  'finished_at',
  'inserted_at',
  'iter_index',
  'kind',
  'loop_node_id',
  'node_id',
  'provider',
  'started_at',
  'status',
];

/** An executions row in the shape the engine writes, heavy payloads as JSON text. */
function executionRow(workspaceId: string, workflowId: string, second: number, values: Partial<ExecutionsTable> = {}): ExecutionsTable {
  return {
    id: newId(),
    workspace_id: workspaceId,
    workflow_id: workflowId,
    workflow_snapshot_id: newId(),
    status: 'completed',
    triggered_by_step_id: null,
    parent_execution_id: null,
    call_depth: 0,
    retry_of_execution_id: null,
    user_id: null,
    started_at: at(second),
    finished_at: at(second),
    inserted_at: at(second),
    updated_at: at(second),
    context: null,
    inputs: JSON.stringify({ method: 'RUN', headers: {}, query: {}, body: { n: second } }),
    output: null,
    error: null,
    step_count: null,
    run_at: null,
    lease_owner: null,
    lease_expires_at: null,
    response: null,
    concurrency_limit: null,
    waiter: null,
    replay_of_execution_id: null,
    rerun_of_execution_id: null,
    rerun_from_node_id: null,
    error_of_execution_id: null,
    error_workflow_execution_id: null,
    error_workflow_skipped: null,
    ...values,
  };
}

function stepRow(execution: ExecutionsTable, second: number, values: Partial<ExecutionStepsTable>): ExecutionStepsTable {
  return {
    id: newId(),
    workspace_id: execution.workspace_id,
    workflow_execution_id: execution.id,
    node_id: 'n',
    status: 'completed',
    attempt: 1,
    workflow_step_id: null,
    awaiting_workflow_execution_id: null,
    duration_ms: 5,
    started_at: at(second),
    finished_at: at(second),
    iter_index: null,
    kind: 'code',
    loop_node_id: null,
    provider: null,
    input: null,
    output: null,
    error: null,
    logs: null,
    ports: null,
    memory_bytes: null,
    output_bytes: null,
    reductions: null,
    resume_at: null,
    inserted_at: at(second),
    updated_at: at(second),
    reused_from_step_id: null,
    ...values,
  };
}

describeEachDialect('executions API', (dialect) => {
  let t: TestApp;
  const wf = { alpha: '', beta: '', foreign: '' };
  // In insertion order: e[0] is the oldest; e[4] and e[5] share an inserted_at.
  let e: ExecutionsTable[];
  let steps: ExecutionStepsTable[];
  let foreign: { execution: ExecutionsTable; step: ExecutionStepsTable };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const create = async (name: string, token = t.tokens.build) =>
      (await t.request('POST', '/api/v1/workflows', { token, body: { data: { name } } })).body.data.id as string;
    wf.alpha = await create('Alpha');
    wf.beta = await create('Beta');
    wf.foreign = await create('Foreign', t.tokens.other);
    const main = t.workspaces.main;
    e = [
      executionRow(main, wf.alpha, 1, {
        step_count: 6,
        user_id: newId(),
        output: JSON.stringify({ ok: true }),
        context: JSON.stringify({ nodes: {} }),
      }),
      executionRow(main, wf.alpha, 2, { status: 'failed', step_count: 2, error: JSON.stringify({ message: 'boom', retryable: false }) }),
      executionRow(main, wf.beta, 3, { status: 'running', finished_at: null, step_count: 1 }),
      executionRow(main, wf.beta, 4, { status: 'pending', started_at: null, finished_at: null }),
      executionRow(main, wf.alpha, 5, { status: 'waiting', finished_at: null, output: JSON.stringify('plain text') }),
      executionRow(main, wf.beta, 5, { status: 'cancelled' }),
    ];
    const first = e[0]!;
    steps = [
      stepRow(first, 1, { node_id: 'hook', kind: 'webhook', input: JSON.stringify({ body: 1 }), output: JSON.stringify({ body: 1 }) }),
      stepRow(first, 2, {
        node_id: 'shape',
        output: JSON.stringify('text'),
        logs: JSON.stringify(['hello']),
        memory_bytes: 2048,
        output_bytes: 6,
        reductions: 5_000_000_000,
      }),
      stepRow(first, 3, {
        node_id: 'call',
        status: 'running',
        kind: 'call_workflow',
        finished_at: null,
        duration_ms: null,
        output: JSON.stringify(42),
      }),
      stepRow(first, 4, {
        node_id: 'fail',
        status: 'failed',
        attempt: 3,
        error: JSON.stringify({ message: 'nope', code: 'http_500' }),
        output: JSON.stringify([1, 'a']),
      }),
      stepRow(first, 5, { node_id: 'skip', status: 'skipped', kind: null, started_at: null, finished_at: null, duration_ms: null }),
      stepRow(first, 6, { node_id: 'wait', status: 'waiting', kind: 'wait', resume_at: at(59), iter_index: 0, loop_node_id: 'loop' }),
      stepRow(first, 7, { node_id: 'later', status: 'pending', kind: null, started_at: null, finished_at: null, duration_ms: null }),
      stepRow(e[1]!, 2, { node_id: 'other-run' }),
    ];
    e[3]!.triggered_by_step_id = steps[2]!.id;
    const foreignExecution = executionRow(t.workspaces.other, wf.foreign, 9);
    foreign = { execution: foreignExecution, step: stepRow(foreignExecution, 9, { node_id: 'foreign' }) };
    await t.deps.db
      .insertInto('executions')
      .values([...e, foreign.execution])
      .execute();
    await t.deps.db
      .insertInto('execution_steps')
      .values([...steps, foreign.step])
      .execute();
  });
  afterAll(() => t.close());

  const get = (url: string, token?: string) => t.request('GET', url.replace('http://sy.test', ''), token ? { token } : {});
  const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((d) => d.id);
  const idsOf = (...indexes: number[]) => indexes.map((i) => e[i]!.id);

  describe('execution lists', () => {
    it('lists the workspace’s executions newest first, the id breaking a tie, with the default attributes only', async () => {
      const res = await get('/api/v1/executions');
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual(idsOf(5, 4, 3, 2, 1, 0));
      const pending = res.body.data[2];
      expect(Object.keys(pending.attributes).sort()).toEqual(EXECUTION_DEFAULTS);
      expect(pending).toMatchObject({
        type: 'execution',
        attributes: {
          status: 'pending',
          workflow_id: wf.beta,
          triggered_by_step_id: steps[2]!.id,
          started_at: null,
          finished_at: null,
          inserted_at: at(4),
        },
        relationships: { workflow: { data: { type: 'workflow', id: wf.beta } } },
        links: { self: `http://sy.test/api/v1/executions/${e[3]!.id}` },
      });
    });

    it('returns heavy payloads and other opt-in attributes only when fields[execution] names them', async () => {
      const res = await get(
        '/api/v1/executions?fields[execution]=status,context,inputs,output,error,step_count,user_id,workflow_snapshot_id,workspace_id,updated_at&sort=inserted_at',
      );
      const [oldest, failed] = res.body.data;
      expect(oldest.attributes).toEqual({
        status: 'completed',
        updated_at: at(1),
        context: { nodes: {} },
        inputs: { method: 'RUN', headers: {}, query: {}, body: { n: 1 } },
        output: { ok: true },
        error: null,
        step_count: 6,
        user_id: e[0]!.user_id,
        workflow_snapshot_id: e[0]!.workflow_snapshot_id,
        workspace_id: t.workspaces.main,
      });
      expect(failed.attributes.error).toEqual({ message: 'boom', retryable: false });
      expect(res.body.data[4].attributes.output).toBe('plain text');
      expect(Object.keys((await get('/api/v1/executions?fields[execution]=')).body.data[0].attributes)).toEqual([]);
    });

    it('filters by status, workflow, workflow name, step count and missing finish time', async () => {
      expect(ids(await get('/api/v1/executions?filter[status][in]=completed,failed'))).toEqual(idsOf(1, 0));
      expect(ids(await get('/api/v1/executions?filter[status][in][]=running&filter[status][in][]=waiting'))).toEqual(idsOf(4, 2));
      expect(ids(await get('/api/v1/executions?filter[workflow][name][eq]=Beta'))).toEqual(idsOf(5, 3, 2));
      expect(ids(await get(`/api/v1/executions?filter[workflow_id][eq]=${wf.alpha}`))).toEqual(idsOf(4, 1, 0));
      expect(ids(await get('/api/v1/executions?filter[step_count][greater_than_or_equal]=2'))).toEqual(idsOf(1, 0));
      expect(ids(await get('/api/v1/executions?filter[step_count][is_nil]=true'))).toEqual(idsOf(5, 4, 3));
      expect(ids(await get('/api/v1/executions?filter[finished_at][is_nil]=true'))).toEqual(idsOf(4, 3, 2));
      expect(ids(await get(`/api/v1/executions?filter[triggered_by_step_id]=${steps[2]!.id}`))).toEqual(idsOf(3));
      expect(
        ids(
          await get('/api/v1/executions?filter[or][0][status]=failed&filter[or][1][workflow][name][eq]=Beta&filter[not][status]=cancelled'),
        ),
      ).toEqual(idsOf(3, 2, 1));
    });

    it('never reaches another workspace’s workflows through a relation filter', async () => {
      expect(ids(await get('/api/v1/executions?filter[workflow][name][eq]=Foreign'))).toEqual([]);
      expect(ids(await get(`/api/v1/executions?filter[workflow_id][eq]=${wf.foreign}`))).toEqual([]);
      expect(ids(await get('/api/v1/executions', t.tokens.other))).toEqual([foreign.execution.id]);
    });

    it('answers 400 naming the parameter for an unknown attribute, operator, status or sort', async () => {
      for (const [query, parameter] of [
        ['filter[nope]=1', 'filter[nope]'],
        ['filter[status][eq]=done', 'filter[status][eq]'],
        ['filter[workflow][nope]=1', 'filter[workflow][nope]'],
        ['sort=output', 'sort'],
        ['fields[execution]=graph', 'fields[execution]'],
        ['include=steps', 'include'],
      ]) {
        const res = await get(`/api/v1/executions?${query}`);
        expect(res.status, query).toBe(400);
        expect(res.body.errors[0].source, query).toEqual({ parameter });
      }
    });

    it('sorts by any scalar attribute, ascending or descending', async () => {
      expect(ids(await get('/api/v1/executions?sort=inserted_at'))).toEqual(idsOf(0, 1, 2, 3, 4, 5));
      expect(ids(await get('/api/v1/executions?sort=status,-inserted_at'))).toEqual(idsOf(5, 0, 1, 3, 2, 4));
      expect(ids(await get('/api/v1/executions?sort=-step_count&page[limit]=2')).slice(0, 2)).toEqual(idsOf(5, 4));
    });

    it('walks keyset pages through links.next without skipping or repeating, with a count', async () => {
      const seen: string[] = [];
      let res = await get('/api/v1/executions?page[limit]=4&page[count]=true');
      expect(res.body.links.next).toContain('page%5Bafter%5D');
      for (;;) {
        expect(res.body.meta).toEqual({ count: 6 });
        seen.push(...ids(res));
        if (!res.body.links.next) break;
        res = await get(res.body.links.next);
      }
      expect(seen).toEqual(idsOf(5, 4, 3, 2, 1, 0));
      const back = await get(res.body.links.prev);
      expect(ids(back)).toEqual(idsOf(5, 4, 3, 2));
    });

    it('includes each execution’s workflow once with include=workflow', async () => {
      const res = await get('/api/v1/executions?include=workflow');
      expect(res.body.included.map((w: { id: string }) => w.id)).toEqual([wf.beta, wf.alpha]);
      expect(res.body.included[0]).toMatchObject({
        type: 'workflow',
        attributes: { name: 'Beta', status: 'inactive' },
        links: { self: `http://sy.test/api/v1/workflows/${wf.beta}` },
      });
      expect(Object.keys(res.body.included[0].attributes).sort()).toEqual(['ai_auto_probe', 'created_at', 'name', 'status', 'updated_at']);
      expect((await get('/api/v1/executions?filter[workflow_id]=' + UNKNOWN + '&include=workflow')).body.included).toEqual([]);
    });

    it('lists one workflow’s executions newest first, with the same query language', async () => {
      expect(ids(await get(`/api/v1/workflows/${wf.alpha}/executions`))).toEqual(idsOf(4, 1, 0));
      const filtered = await get(`/api/v1/workflows/${wf.alpha}/executions?filter[status]=failed&page[count]=true`);
      expect(ids(filtered)).toEqual(idsOf(1));
      expect(filtered.body.meta.count).toBe(1);
      expect(filtered.body.links.self).toContain(`/api/v1/workflows/${wf.alpha}/executions?`);
      expect(ids(await get(`/api/v1/workflows/${wf.alpha}/executions?filter[workflow][name]=Beta`))).toEqual([]);
    });
  });

  describe('one execution', () => {
    it('reads an execution with its workflow relationship; payloads and included fields on request', async () => {
      const plain = await get(`/api/v1/executions/${e[1]!.id}`);
      expect(plain.status).toBe(200);
      expect(Object.keys(plain.body.data.attributes).sort()).toEqual(EXECUTION_DEFAULTS);
      expect(plain.body.data.relationships.workflow.data).toEqual({ type: 'workflow', id: wf.alpha });
      expect(plain.body.included).toBeUndefined();
      const rich = await get(`/api/v1/executions/${e[1]!.id}?fields[execution]=status,error&include=workflow&fields[workflow]=name`);
      expect(rich.body.data.attributes).toEqual({ status: 'failed', error: { message: 'boom', retryable: false } });
      expect(rich.body.included).toEqual([
        { type: 'workflow', id: wf.alpha, attributes: { name: 'Alpha' }, links: { self: `http://sy.test/api/v1/workflows/${wf.alpha}` } },
      ]);
    });
  });

  describe('steps', () => {
    const stepsUrl = (query = '') => `/api/v1/executions/${e[0]!.id}/steps${query}`;
    const nodes = (res: { body: { data: { attributes: { node_id: string } }[] } }) => res.body.data.map((d) => d.attributes.node_id);

    it('lists a run’s steps in the order they ran, every status, default attributes only', async () => {
      const res = await get(stepsUrl());
      expect(res.status).toBe(200);
      expect(nodes(res)).toEqual(['hook', 'shape', 'call', 'fail', 'skip', 'wait', 'later']);
      expect(res.body.data.map((d: { attributes: { status: string } }) => d.attributes.status).sort()).toEqual([
        'completed',
        'completed',
        'failed',
        'pending',
        'running',
        'skipped',
        'waiting',
      ]);
      for (const step of res.body.data) expect(Object.keys(step.attributes).sort()).toEqual(STEP_DEFAULTS);
      expect(res.body.data[5]).toMatchObject({
        type: 'execution-step',
        attributes: { status: 'waiting', kind: 'wait', iter_index: 0, loop_node_id: 'loop', attempt: 1, duration_ms: 5, provider: null },
        relationships: { workflow_execution: { data: { type: 'execution', id: e[0]!.id } } },
      });
      const self = await get(res.body.data[3].links.self);
      expect(nodes(self)).toEqual(['fail']);
    });

    it('returns any JSON as input and output, and the other opt-in attributes, on request', async () => {
      const fields =
        'fields[execution-step]=input,output,error,logs,memory_bytes,output_bytes,reductions,resume_at,updated_at,workflow_execution_id,workflow_step_id,awaiting_workflow_execution_id';
      const data = (await get(stepsUrl(`?${fields}`))).body.data;
      expect(data.map((d: { attributes: { output: unknown } }) => d.attributes.output)).toEqual([
        { body: 1 },
        'text',
        42,
        [1, 'a'],
        null,
        null,
        null,
      ]);
      expect(data[1].attributes).toMatchObject({
        logs: ['hello'],
        memory_bytes: 2048,
        output_bytes: 6,
        reductions: 5_000_000_000,
        workflow_execution_id: e[0]!.id,
        workflow_step_id: null,
      });
      expect(data[3].attributes.error).toEqual({ message: 'nope', code: 'http_500' });
      expect(data[5].attributes.resume_at).toBe(at(59));
      expect(data[0].attributes.input).toEqual({ body: 1 });
    });

    it('filters on step attributes and on the execution through filter[workflow_execution]', async () => {
      expect(nodes(await get(stepsUrl('?filter[status][in]=failed,skipped')))).toEqual(['fail', 'skip']);
      expect(nodes(await get(stepsUrl('?filter[kind][is_nil]=true&sort=-inserted_at')))).toEqual(['later', 'skip']);
      expect(nodes(await get(stepsUrl('?filter[workflow_execution][status][eq]=completed')))).toHaveLength(7);
      expect(nodes(await get(stepsUrl('?filter[workflow_execution][status][eq]=failed')))).toEqual([]);
      expect(nodes(await get(stepsUrl('?filter[workflow_execution][workflow][name][eq]=Alpha&filter[attempt][greater_than]=1')))).toEqual([
        'fail',
      ]);
      expect(nodes(await get(`/api/v1/executions/${e[1]!.id}/steps`))).toEqual(['other-run']);
    });

    it('pages by cursor and includes the execution on request', async () => {
      const first = await get(stepsUrl('?page[limit]=5&include=workflow_execution'));
      expect(nodes(first)).toEqual(['hook', 'shape', 'call', 'fail', 'skip']);
      expect(first.body.included).toMatchObject([{ type: 'execution', id: e[0]!.id, attributes: { status: 'completed' } }]);
      const second = await get(first.body.links.next);
      expect(nodes(second)).toEqual(['wait', 'later']);
      expect(second.body.links.next).toBeUndefined();
      expect((await get(stepsUrl('?include=workflow'))).status).toBe(400);
    });
  });

  describe('scoping', () => {
    const routes = (id: string) => [`/api/v1/executions/${id}`, `/api/v1/executions/${id}/steps`];

    it('answers 404 for another workspace’s, unknown and malformed ids exactly alike, on every route', async () => {
      const strip = (body: { errors: { id?: string }[] }) => body.errors.map(({ id: _id, ...rest }) => rest);
      const cases: [string[], string[]][] = [
        [routes(foreign.execution.id), routes(UNKNOWN)],
        [routes('not-a-uuid'), routes(UNKNOWN)],
        [[`/api/v1/workflows/${wf.foreign}/executions`], [`/api/v1/workflows/${UNKNOWN}/executions`]],
        [['/api/v1/workflows/not-a-uuid/executions'], [`/api/v1/workflows/${UNKNOWN}/executions`]],
      ];
      for (const [left, right] of cases) {
        for (const [index, url] of left.entries()) {
          const [a, b] = [await get(url), await get(right[index]!)];
          expect(a.status, url).toBe(404);
          expect(b.status).toBe(404);
          expect(strip(a.body), url).toEqual(strip(b.body));
        }
      }
      expect((await get(`/api/v1/executions?filter[id]=${foreign.execution.id}`)).body.data).toEqual([]);
    });

    it('lets a read token use every execution route', async () => {
      for (const url of ['/api/v1/executions', `/api/v1/workflows/${wf.alpha}/executions`, ...routes(e[0]!.id)]) {
        expect((await get(url, t.tokens.read)).status, url).toBe(200);
      }
    });
  });

  describe('cached lists stay fresh', () => {
    it('a new execution, a status change and a workflow rename show at once', async () => {
      const list = async () => ids(await get(`/api/v1/workflows/${wf.beta}/executions?filter[status]=running`));
      expect(await list()).toEqual(idsOf(2));
      await t.deps.db.updateTable('executions').set({ status: 'completed' }).where('id', '=', e[2]!.id).execute();
      expect(await list()).toEqual([]);
      const added = executionRow(t.workspaces.main, wf.beta, 30, { status: 'running' });
      await t.deps.db.insertInto('executions').values(added).execute();
      expect(await list()).toEqual([added.id]);

      const byName = async () =>
        (await get(`/api/v1/executions/${e[0]!.id}/steps?filter[workflow_execution][workflow][name]=Alpha`)).body.data.length;
      expect(await byName()).toBe(7);
      await t.request('PATCH', `/api/v1/workflows/${wf.alpha}`, {
        body: { data: { type: 'workflow', id: wf.alpha, attributes: { name: 'Renamed' } } },
      });
      expect(await byName()).toBe(0);
    });
  });
});
