import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type ErrorWorkflowResolver } from '../src/engine/engine.js';
import { findExecution } from '../src/engine/execution-store.js';
import { newId } from '../src/lib/ids.js';
import { errorWorkflowResolver } from '../src/services/executions/error-workflows.js';
import { until } from './support/cluster-helpers.js';
import { describeEachDialect, TEST_DATABASE_URL } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { exportOf, importOk } from './support/document-helpers.js';

const UNKNOWN = '0190f2a0-0000-7000-8000-000000000000';

/** A resolver that, while `hold` is set, waits to be released: a cancellation can win the race meanwhile. */
function gatedResolver(resolve: ErrorWorkflowResolver) {
  const gate = { hold: false, reached: false, release: () => {} };
  const resolver: ErrorWorkflowResolver = async (request) => {
    if (gate.hold) {
      gate.reached = true;
      await new Promise<void>((done) => (gate.release = done));
    }
    return resolve(request);
  };
  return { gate, resolver };
}

const FAILING = {
  nodes: [node('start', 'webhook'), node('boom', 'code', { code: "throw new Error('boom')" })],
  edges: [edge('start', 'boom')],
};
const PASSING = { nodes: [node('start', 'webhook'), node('fine', 'set', { values: { ok: true } })], edges: [edge('start', 'fine')] };
/** An error workflow whose step reads the input through `trigger`. */
const REPORTING = {
  nodes: [
    node('start', 'webhook'),
    node('fine', 'set', { values: { ok: true, failed: '{{ trigger.execution.id }}', workflow: '{{ trigger.workflow.name }}' } }),
  ],
  edges: [edge('start', 'fine')],
};

/** Issue 37 item 4: a workflow's `error_workflow_id`, started once when one of its executions fails (docs/run-control.md). */
describeEachDialect('error workflows', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  const patch = (id: string, attributes: Record<string, unknown>, token?: string) =>
    t.request('PATCH', `/api/v1/workflows/${id}?fields[workflow]=name,error_workflow_id`, {
      body: { data: { type: 'workflow', id, attributes } },
      ...(token ? { token } : {}),
    });
  const errorExecutions = (failedId: string) =>
    t.deps.db.selectFrom('executions').selectAll().where('error_of_execution_id', '=', failedId).execute();
  const executionsOf = (workflowId: string) =>
    t.deps.db.selectFrom('executions').selectAll().where('workflow_id', '=', workflowId).execute();

  describe('the attribute', () => {
    it('is set and cleared by PATCH, in both body forms, and read through fields[workflow]', async () => {
      const failing = await workflowWith(t, 'Sets', FAILING);
      const handler = await workflowWith(t, 'Handler', PASSING);
      const set = await patch(failing, { error_workflow_id: handler });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect(set.body.data.attributes).toEqual({ name: 'Sets', error_workflow_id: handler });
      const read = await t.request('GET', `/api/v1/workflows/${failing}?fields[workflow]=error_workflow_id`);
      expect(read.body.data.attributes).toEqual({ error_workflow_id: handler });
      const cleared = await t.request('PATCH', `/api/v1/workflows/${failing}?fields[workflow]=error_workflow_id`, {
        body: { data: { error_workflow_id: null } },
      });
      expect(cleared.status).toBe(200);
      expect(cleared.body.data.attributes).toEqual({ error_workflow_id: null });
      // The flat form sets it too.
      const flat = await t.request('PATCH', `/api/v1/workflows/${failing}?fields[workflow]=error_workflow_id`, {
        body: { data: { error_workflow_id: handler } },
      });
      expect(flat.body.data.attributes).toEqual({ error_workflow_id: handler });
    });

    it('answers 422 pointing at the attribute for a foreign, unknown or malformed workflow, or the workflow itself', async () => {
      const failing = await workflowWith(t, 'Points', FAILING);
      const foreign = await t.request('POST', '/api/v1/workflows', { token: t.tokens.other, body: { data: { name: 'Elsewhere' } } });
      const cases: [unknown, string][] = [
        [foreign.body.data.id, 'error_workflow_id names no workflow of this workspace'],
        [UNKNOWN, 'error_workflow_id names no workflow of this workspace'],
        [failing, 'error_workflow_id must name another workflow, not this one'],
        ['not-a-uuid', 'error_workflow_id must be a workflow id or null'],
      ];
      for (const [value, detail] of cases) {
        const res = await patch(failing, { error_workflow_id: value });
        expect(res.status, String(value)).toBe(422);
        expect(res.body.errors[0]).toMatchObject({
          code: 'validation_failed',
          detail,
          source: { pointer: '/data/attributes/error_workflow_id' },
        });
      }
      const flat = await t.request('PATCH', `/api/v1/workflows/${failing}`, { body: { data: { error_workflow_id: UNKNOWN } } });
      expect(flat.status).toBe(422);
      expect(flat.body.errors[0].source).toEqual({ pointer: '/data/error_workflow_id' });
      const row = await t.request('GET', `/api/v1/workflows/${failing}?fields[workflow]=error_workflow_id`);
      expect(row.body.data.attributes).toEqual({ error_workflow_id: null });
    });

    it('is refused to a read token (403) and hidden from another workspace (404)', async () => {
      const failing = await workflowWith(t, 'Guarded', FAILING);
      const handler = await workflowWith(t, 'Guard', PASSING);
      expect((await patch(failing, { error_workflow_id: handler }, t.tokens.read)).status).toBe(403);
      expect((await patch(failing, { error_workflow_id: handler }, t.tokens.other)).status).toBe(404);
      const row = await t.request('GET', `/api/v1/workflows/${failing}?fields[workflow]=error_workflow_id`);
      expect(row.body.data.attributes).toEqual({ error_workflow_id: null });
    });

    it('is cleared on the workflows that name a workflow when that workflow is deleted', async () => {
      const handler = await workflowWith(t, 'Doomed handler', PASSING);
      const a = await workflowWith(t, 'Names it', FAILING);
      const b = await workflowWith(t, 'Names it too', FAILING);
      await patch(a, { error_workflow_id: handler });
      await patch(b, { error_workflow_id: handler });
      expect((await t.request('DELETE', `/api/v1/workflows/${handler}`)).status).toBe(204);
      for (const id of [a, b]) {
        const row = await t.request('GET', `/api/v1/workflows/${id}?fields[workflow]=error_workflow_id`);
        expect(row.body.data.attributes).toEqual({ error_workflow_id: null });
      }
    });
  });

  describe('a failed execution', () => {
    it('starts the error workflow once with the failure as input, and names that execution', async () => {
      const failing = await workflowWith(t, 'Fails', FAILING);
      const handler = await workflowWith(t, 'Reports', REPORTING, { activate: true });
      await patch(failing, { error_workflow_id: handler });
      const failedId = await runToRest(t, failing);
      const failed = await executionRow(t, failedId);
      expect(failed.status).toBe('failed');
      const started = await errorExecutions(failedId);
      expect(started).toHaveLength(1);
      const run = started[0]!;
      expect(failed.error_workflow_execution_id).toBe(run.id);
      expect(failed.error_workflow_skipped).toBeNull();
      expect(run.workflow_id).toBe(handler);
      expect(run.status).toBe('completed');
      expect(run.parent_execution_id).toBeNull();
      const input = {
        execution: {
          id: failedId,
          status: 'failed',
          error: JSON.parse(failed.error!),
          failed_node_id: 'boom',
          started_at: failed.started_at,
          finished_at: failed.finished_at,
        },
        workflow: { id: failing, name: 'Fails' },
      };
      // The trigger step receives the input as its output (the execution's inputs too).
      expect(JSON.parse(run.inputs!)).toEqual(input);
      expect(input.execution.error).toMatchObject({ code: expect.any(String), node_id: 'boom' });
      expect(input.execution.started_at).not.toBeNull();
      const steps = await stepRows(t, run.id);
      expect(steps.find((row) => row.node_id === 'start')!.output).toEqual(input);
      // Expressions read it as `trigger`.
      expect(steps.find((row) => row.node_id === 'fine')!.output).toEqual({ ok: true, failed: failedId, workflow: 'Fails' });
      // The API shows both ends of the link; the attributes are opt-in.
      const api = await t.request(
        'GET',
        `/api/v1/executions/${failedId}?fields[execution]=status,error_workflow_execution_id,error_workflow_skipped`,
      );
      expect(api.body.data.attributes).toEqual({ status: 'failed', error_workflow_execution_id: run.id, error_workflow_skipped: null });
      const plain = await t.request('GET', `/api/v1/executions/${failedId}`);
      expect(plain.body.data.attributes).not.toHaveProperty('error_workflow_execution_id');
      expect(plain.body.data.attributes).not.toHaveProperty('error_workflow_skipped');
      const back = await t.request('GET', `/api/v1/executions/${run.id}?fields[execution]=error_of`);
      expect(back.body.data.attributes).toEqual({ error_of: failedId });
      // Nothing else started it.
      expect(await executionsOf(handler)).toHaveLength(1);
    });

    it('of a manual run starts it too, whatever the trigger step of the error workflow', async () => {
      const failing = await workflowWith(t, 'Fails manually', FAILING, { activate: true });
      const handler = await workflowWith(
        t,
        'Scheduled handler',
        {
          nodes: [
            node('tick', 'schedule', { cron: '0 0 1 1 *' }),
            node('note', 'set', { values: { failed: '{{ trigger.execution.id }}' } }),
          ],
          edges: [edge('tick', 'note')],
        },
        { activate: true },
      );
      await patch(failing, { error_workflow_id: handler });
      const failedId = await runToRest(t, failing, {});
      const [run] = await errorExecutions(failedId);
      expect(run!.status).toBe('completed');
      expect((await executionRow(t, failedId)).error_workflow_execution_id).toBe(run!.id);
      const steps = await stepRows(t, run!.id);
      expect(steps.find((row) => row.node_id === 'tick')!.output).toMatchObject({
        execution: { id: failedId, status: 'failed', failed_node_id: 'boom' },
        workflow: { id: failing, name: 'Fails manually' },
      });
      expect(steps.find((row) => row.node_id === 'note')!.output).toEqual({ failed: failedId });
    });

    it('of an error workflow starts nothing more, even when it names one itself', async () => {
      const failing = await workflowWith(t, 'Fails first', FAILING);
      const handler = await workflowWith(t, 'Fails too', FAILING, { activate: true });
      await patch(failing, { error_workflow_id: handler });
      // Each names the other: without the rule this would loop for ever.
      await patch(handler, { error_workflow_id: failing });
      expect((await t.request('POST', `/api/v1/workflows/${failing}/activate`)).status).toBe(200);
      const failedId = await runToRest(t, failing);
      const [run] = await errorExecutions(failedId);
      expect(run!.status).toBe('failed');
      // It names an error workflow: `loop` says why nothing started.
      expect(run!.error_workflow_execution_id).toBeNull();
      expect(run!.error_workflow_skipped).toBe('loop');
      expect(await errorExecutions(run!.id)).toEqual([]);
      expect(await executionsOf(failing)).toHaveLength(1);
      expect(await executionsOf(handler)).toHaveLength(1);
    });

    it('records the reason when the error workflow is inactive, and starts nothing', async () => {
      const failing = await workflowWith(t, 'Fails, inactive handler', FAILING);
      const handler = await workflowWith(t, 'Inactive handler', PASSING);
      await patch(failing, { error_workflow_id: handler });
      const failedId = await runToRest(t, failing);
      const row = await executionRow(t, failedId);
      expect(row.error_workflow_skipped).toBe('inactive');
      expect(row.error_workflow_execution_id).toBeNull();
      const api = await t.request(
        'GET',
        `/api/v1/executions/${failedId}?fields[execution]=error_workflow_execution_id,error_workflow_skipped`,
      );
      expect(api.body.data.attributes).toEqual({ error_workflow_execution_id: null, error_workflow_skipped: 'inactive' });
      expect(await errorExecutions(failedId)).toEqual([]);
      expect(await executionsOf(handler)).toEqual([]);
    });

    it('records the reason when the error workflow was deleted meanwhile', async () => {
      const failing = await workflowWith(t, 'Fails, deleted handler', FAILING);
      const handler = await workflowWith(t, 'Deleted handler', PASSING, { activate: true });
      await patch(failing, { error_workflow_id: handler });
      // A deletion clears the reference (above); a row naming a workflow that is gone is a race, written here directly.
      await t.deps.db.deleteFrom('workflows').where('id', '=', handler).execute();
      const failedId = await runToRest(t, failing);
      const row = await executionRow(t, failedId);
      expect(row.error_workflow_skipped).toBe('missing');
      expect(row.error_workflow_execution_id).toBeNull();
      expect(await errorExecutions(failedId)).toEqual([]);
    });

    it('cancelled while its failure is written starts nothing: the start rides on the failure commit (alone)', async () => {
      // Its own engine without a cluster (the app's engine on PostgreSQL is one; the cluster case is below).
      const { gate, resolver } = gatedResolver(errorWorkflowResolver(t.deps.db));
      const engine = new Engine({
        db: t.deps.db,
        clock: t.clock,
        settings: { httpAllow: [] },
        timers: false,
        resolveErrorWorkflow: resolver,
      });
      const failing = await workflowWith(t, 'Cancelled while failing', FAILING, { activate: true });
      const handler = await workflowWith(t, 'Raced handler', PASSING, { activate: true });
      await patch(failing, { error_workflow_id: handler });
      const snapshot = await t.deps.db
        .selectFrom('workflows')
        .select('active_snapshot_id')
        .where('id', '=', failing)
        .executeTakeFirstOrThrow();
      gate.hold = true;
      const { execution_id: id } = await engine.run({
        workspaceId: t.workspaces.main,
        workflowId: failing,
        snapshotId: snapshot.active_snapshot_id!,
        userId: null,
        trigger: { method: 'POST', headers: {}, query: {}, body: {} },
      });
      await until(() => gate.reached);
      expect((await engine.cancel((await findExecution(t.deps.db, id))!)).cancelled).toBe(true);
      gate.release();
      await engine.idle();
      await engine.stop();
      const row = await executionRow(t, id);
      expect(row.status).toBe('cancelled');
      expect(row.error_workflow_execution_id).toBeNull();
      expect(row.error_workflow_skipped).toBeNull();
      expect(await executionsOf(handler)).toEqual([]);
    });

    it('of a workflow without an error workflow records nothing', async () => {
      const failing = await workflowWith(t, 'Fails alone', FAILING);
      const failedId = await runToRest(t, failing);
      const row = await executionRow(t, failedId);
      expect(row.error_workflow_execution_id).toBeNull();
      expect(row.error_workflow_skipped).toBeNull();
      expect(await errorExecutions(failedId)).toEqual([]);
    });

    it('of an error workflow that names none records nothing', async () => {
      const failing = await workflowWith(t, 'Fails, failing handler', FAILING);
      const handler = await workflowWith(t, 'Failing handler alone', FAILING, { activate: true });
      await patch(failing, { error_workflow_id: handler });
      const [run] = await errorExecutions(await runToRest(t, failing));
      expect(run!.status).toBe('failed');
      expect(run!.error_workflow_execution_id).toBeNull();
      expect(run!.error_workflow_skipped).toBeNull();
    });
  });

  it('a completed execution starts nothing', async () => {
    const passing = await workflowWith(t, 'Passes', PASSING);
    const handler = await workflowWith(t, 'Never runs', PASSING, { activate: true });
    await patch(passing, { error_workflow_id: handler });
    const id = await runToRest(t, passing);
    const row = await executionRow(t, id);
    expect(row.status).toBe('completed');
    expect(row.error_workflow_execution_id).toBeNull();
    expect(row.error_workflow_skipped).toBeNull();
    expect(await executionsOf(handler)).toEqual([]);
  });

  it("a call_workflow child that fails starts its own workflow's error workflow, and its failed parent its own", async () => {
    const child = await workflowWith(t, 'Failing child', FAILING, { activate: true });
    const parent = await workflowWith(t, 'Calling parent', {
      nodes: [node('start', 'webhook'), node('call', 'call_workflow', { workflow_id: child })],
      edges: [edge('start', 'call')],
    });
    const handler = await workflowWith(t, 'Tree handler', PASSING, { activate: true });
    const childHandler = await workflowWith(t, 'Child handler', PASSING, { activate: true });
    await patch(parent, { error_workflow_id: handler });
    await patch(child, { error_workflow_id: childHandler });
    const parentId = await runToRest(t, parent);
    const parentRow = await executionRow(t, parentId);
    expect(parentRow.status).toBe('failed');
    const [childRow] = await executionsOf(child);
    expect(childRow!.status).toBe('failed');
    expect(childRow!.parent_execution_id).toBe(parentId);
    const [childRun] = await executionsOf(childHandler);
    expect(childRun!.error_of_execution_id).toBe(childRow!.id);
    expect(childRun!.status).toBe('completed');
    expect(childRun!.parent_execution_id).toBeNull();
    expect(JSON.parse(childRun!.inputs!)).toMatchObject({
      execution: { id: childRow!.id },
      workflow: { id: child, name: 'Failing child' },
    });
    expect(childRow!.error_workflow_execution_id).toBe(childRun!.id);
    const [parentRun] = await executionsOf(handler);
    expect(parentRun!.error_of_execution_id).toBe(parentId);
    expect(parentRow.error_workflow_execution_id).toBe(parentRun!.id);
  });

  it('a call_workflow child that fails starts its error workflow even when its parent handles the failure', async () => {
    const child = await workflowWith(t, 'Failing handled child', FAILING, { activate: true });
    const parent = await workflowWith(t, 'Handling parent', {
      nodes: [
        node('start', 'webhook'),
        node('call', 'call_workflow', { workflow_id: child }, { on_error: 'continue' }),
        node('after', 'set', { values: { handled: true } }),
      ],
      edges: [edge('start', 'call'), edge('call', 'after', 'error')],
    });
    const childHandler = await workflowWith(t, 'Handled child handler', PASSING, { activate: true });
    await patch(child, { error_workflow_id: childHandler });
    const parentId = await runToRest(t, parent);
    const parentRow = await executionRow(t, parentId);
    expect(parentRow.status).toBe('completed');
    expect(parentRow.error_workflow_execution_id).toBeNull();
    const [childRow] = await executionsOf(child);
    const runs = await executionsOf(childHandler);
    expect(runs.map((run) => run.error_of_execution_id)).toEqual([childRow!.id]);
    expect(childRow!.error_workflow_execution_id).toBe(runs[0]!.id);
  });

  it('a call_workflow child of an error run is part of it: its failure records loop and starts nothing', async () => {
    const callee = await workflowWith(t, 'Callee of the handler', FAILING, { activate: true });
    const handler = await workflowWith(
      t,
      'Calling handler',
      { nodes: [node('start', 'webhook'), node('call', 'call_workflow', { workflow_id: callee })], edges: [edge('start', 'call')] },
      { activate: true },
    );
    const failing = await workflowWith(t, 'Reported', FAILING);
    await patch(failing, { error_workflow_id: handler });
    // The callee names the handler too: without the rule, each failure would start another run.
    await patch(callee, { error_workflow_id: handler });
    const failedId = await runToRest(t, failing);
    await t.deps.engine.idle();
    const handlerRuns = await executionsOf(handler);
    expect(handlerRuns).toHaveLength(1);
    const [calleeRow] = await executionsOf(callee);
    expect(calleeRow).toMatchObject({ status: 'failed', error_of_execution_id: failedId, error_workflow_skipped: 'loop' });
    expect(calleeRow!.error_workflow_execution_id).toBeNull();
  });

  describe('export and import', () => {
    it('exports the error workflow by export key, and an import binds it when found or reports it when not', async () => {
      const failing = await workflowWith(t, 'Exported', FAILING);
      const handler = await workflowWith(t, 'Exported handler', PASSING);
      await patch(failing, { error_workflow_id: handler });
      const document = await exportOf(t, failing);
      const key = (await t.deps.db.selectFrom('workflows').select('export_key').where('id', '=', handler).executeTakeFirstOrThrow())
        .export_key;
      expect(document.settings.error_workflow).toBe(key);
      expect(document.references).not.toHaveProperty('error_workflow');
      expect(JSON.stringify(document)).not.toContain(handler);
      // Without one, the member is absent.
      expect((await exportOf(t, handler)).settings).not.toHaveProperty('error_workflow');

      // Here the handler exists: bound by its export key, nothing to finish.
      const here = await importOk(t, document);
      const bound = await t.request('GET', `/api/v1/workflows/${here.id}?fields[workflow]=error_workflow_id`);
      expect(bound.body.data.attributes).toEqual({ error_workflow_id: handler });
      expect(here.meta.requirements.bindings).toEqual([]);
      // It is the workflow's attribute, never a graph setting.
      const graph = await t.request('GET', `/api/v1/workflows/${here.id}/graph`);
      expect(JSON.stringify(graph.body)).not.toContain('error_workflow');
      expect((await exportOf(t, here.id)).settings).toEqual({ error_workflow: key });

      // In another workspace no workflow has that key: the attribute stays null and the requirement says so.
      const elsewhere = await t.request('POST', '/api/v1/workflows?fields[workflow]=error_workflow_id', {
        token: t.tokens.other,
        body: { data: { document } },
      });
      expect(elsewhere.status, elsewhere.raw.slice(0, 1000)).toBe(201);
      expect(elsewhere.body.data.attributes).toEqual({ error_workflow_id: null });
      expect(elsewhere.body.meta.requirements.bindings).toEqual([
        {
          pointer: '/error_workflow_id',
          attribute: 'error_workflow_id',
          resource: 'workflow',
          export_key: key,
          detail: `started when an execution fails: the workflow with export key ${key}: import it too (it is bound when found), or set error_workflow_id with PATCH /workflows/:id`,
        },
      ]);
    });

    it('binds it to the sibling of a folder import that has its export key', async () => {
      const folder = (await t.request('POST', '/api/v1/folders', { body: { data: { name: 'With handler' } } })).body.data.id;
      const failing = await workflowWith(t, 'Filed failing', FAILING);
      const handler = await workflowWith(t, 'Filed handler', PASSING);
      await patch(failing, { error_workflow_id: handler });
      for (const id of [failing, handler]) {
        const moved = await t.request('PATCH', `/api/v1/workflows/${id}/move`, {
          body: { data: { type: 'workflow', id, attributes: { folder_id: folder } } },
        });
        expect(moved.status).toBe(200);
      }
      const document = (await t.request('GET', `/api/v1/folders/${folder}/export`)).body;
      const res = await t.request('POST', '/api/v1/folders/import', { token: t.tokens.other, body: { data: { document } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const imported = (name: string) => res.body.meta.workflows.find((w: { name: string }) => w.name === name);
      expect(imported('Filed failing').requirements.bindings).toEqual([]);
      const bound = await t.request('GET', `/api/v1/workflows/${imported('Filed failing').id}?fields[workflow]=error_workflow_id`, {
        token: t.tokens.other,
      });
      expect(bound.body.data.attributes).toEqual({ error_workflow_id: imported('Filed handler').id });
    });

    it('refuses a malformed error workflow reference with a pointer', async () => {
      const failing = await workflowWith(t, 'Malformed', FAILING);
      const document = await exportOf(t, failing);
      document.settings.error_workflow = { export_key: 'not-a-string' };
      const res = await t.request('POST', '/api/v1/workflows', { body: { data: { document } } });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].source).toEqual({ pointer: '/data/document/settings/error_workflow' });
    });
  });
});

/**
 * One API process and two workers on PostgreSQL: the failure's commit, under the worker's lease,
 * inserts the error workflow's execution (handed off or claimed like any other), so each failure
 * starts exactly one, whichever worker ran it.
 */
(TEST_DATABASE_URL ? describe : describe.skip)('error workflows in a cluster [postgres]', () => {
  let t: TestApp;
  const engines: Engine[] = [];
  let gated: ReturnType<typeof gatedResolver>;
  beforeAll(async () => {
    t = await createTestApp('postgres', { role: 'api' });
    gated = gatedResolver(errorWorkflowResolver(t.deps.db));
    await t.deps.engine.start();
    for (let i = 0; i < 2; i++) {
      const engine = new Engine({
        db: t.deps.db,
        clock: t.clock,
        settings: { httpAllow: [] },
        timers: false,
        cluster: {
          processId: newId(),
          notifier: t.database.notifier!,
          leaseMs: 30_000,
          heartbeatMs: 10_000,
          // No poll within the test: every start is found by notification (hand-off, turns, claims).
          pollMs: 60_000,
          maxRunning: 64,
          runsSteps: true,
        },
        resolveCallTarget: (request) => t.deps.executions.resolveCallTarget(request),
        resolveErrorWorkflow: gated.resolver,
      });
      engines.push(engine);
      await engine.start();
    }
  });
  afterAll(async () => {
    for (const engine of engines) await engine.stop();
    await t.close();
  });

  it('starts one error execution per failed execution, run by the workers', async () => {
    const failing = await workflowWith(t, 'Fails in a cluster', FAILING, { activate: true });
    const handler = await workflowWith(t, 'Cluster handler', PASSING, { activate: true });
    const set = await t.request('PATCH', `/api/v1/workflows/${failing}`, { body: { data: { error_workflow_id: handler } } });
    expect(set.status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await t.request('POST', `/api/v1/workflows/${failing}/run`, { body: { data: {} } });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      ids.push(res.body.execution_id as string);
    }
    const rows = () => t.deps.db.selectFrom('executions').selectAll().where('workflow_id', 'in', [failing, handler]).execute();
    await until(async () => (await rows()).filter((row) => row.status === 'completed' || row.status === 'failed').length === 24);
    const all = await rows();
    const failed = all.filter((row) => row.workflow_id === failing);
    const reports = all.filter((row) => row.workflow_id === handler);
    expect(failed.map((row) => row.status)).toEqual(Array(12).fill('failed'));
    expect(reports.map((row) => row.status)).toEqual(Array(12).fill('completed'));
    expect(reports.map((row) => row.error_of_execution_id).sort()).toEqual([...ids].sort());
    for (const row of failed) {
      const report = reports.find((r) => r.error_of_execution_id === row.id)!;
      expect(row.error_workflow_execution_id).toBe(report.id);
    }
  });

  it('a cancellation that wins while a worker writes the failure leaves no error execution (the lease check refuses the commit)', async () => {
    const failing = await workflowWith(t, 'Cancelled in a cluster', FAILING, { activate: true });
    const handler = await workflowWith(t, 'Cluster raced handler', PASSING, { activate: true });
    await t.request('PATCH', `/api/v1/workflows/${failing}`, { body: { data: { error_workflow_id: handler } } });
    gated.gate.hold = true;
    const res = await t.request('POST', `/api/v1/workflows/${failing}/run`, { body: { data: {} } });
    const id = res.body.execution_id as string;
    await until(() => gated.gate.reached);
    gated.gate.hold = false;
    const cancelled = await t.request('POST', `/api/v1/executions/${id}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBeLessThan(300);
    gated.gate.release();
    for (const engine of engines) await engine.idle();
    const row = await executionRow(t, id);
    expect(row.status).toBe('cancelled');
    expect(row.error_workflow_execution_id).toBeNull();
    expect(await t.deps.db.selectFrom('executions').select('id').where('workflow_id', '=', handler).execute()).toEqual([]);
  });
});
