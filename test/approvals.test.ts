import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { createPeerApp, createTestApp, type TestApp } from './support/test-app.js';

const MINUTE = 60_000;

/** webhook -> approval -> (approved) yes | (rejected) no */
function approvalGraph(config: Record<string, unknown>) {
  return {
    nodes: [
      node('start', 'webhook'),
      node('gate', 'approval', config),
      node('yes', 'set', { values: { shipped: true } }),
      node('no', 'set', { values: { shipped: false } }),
    ],
    edges: [edge('start', 'gate'), edge('gate', 'yes', 'approved'), edge('gate', 'no', 'rejected')],
  };
}

/** The approval step's waiting row of an execution. */
async function waitingStep(t: TestApp, executionId: string) {
  const row = (await stepRows(t, executionId)).find((r) => r.node_id === 'gate');
  expect(row?.status).toBe('waiting');
  return row!;
}

describeEachDialect('approval steps', (dialect) => {
  let t: TestApp;
  let gated: string;
  let approveOnTimeout: string;
  let rejectOnTimeout: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    gated = await workflowWith(t, 'Gated', approvalGraph({ message: 'Ship {{ trigger.body.version }}?', timeout_ms: 10 * MINUTE }));
    approveOnTimeout = await workflowWith(
      t,
      'Approve on time-out',
      approvalGraph({ message: 'ok?', timeout_ms: MINUTE, on_timeout: 'approve' }),
    );
    rejectOnTimeout = await workflowWith(
      t,
      'Reject on time-out',
      approvalGraph({ message: 'ok?', timeout_ms: MINUTE, on_timeout: 'reject' }),
    );
  });
  afterAll(() => t.close());

  const decide = (executionId: string, stepId: string, data: unknown, token?: string) =>
    t.request('POST', `/api/v1/executions/${executionId}/steps/${stepId}/decision`, { body: { data }, ...(token ? { token } : {}) });
  const follow = (url: string) => t.request('POST', new URL(url).pathname, { token: null });
  const ran = async (executionId: string) => (await stepRows(t, executionId)).filter((r) => r.status === 'completed').map((r) => r.node_id);

  it('waits with the message and signed links in the step output, the execution waiting until the time-out', async () => {
    const id = await runToRest(t, gated, { draft: true, input: { version: '1.2' } });
    expect((await executionRow(t, id)).status).toBe('waiting');
    const step = await waitingStep(t, id);
    const expiresAt = new Date(Date.parse(t.clock.now()) + 10 * MINUTE).toISOString().replace('Z', '000Z');
    expect(step.kind).toBe('approval');
    expect(step.resume_at).toBe(expiresAt);
    expect((await executionRow(t, id)).run_at).toBe(expiresAt);
    expect(step.output).toEqual({
      message: 'Ship 1.2?',
      approve_url: expect.stringMatching(/^http:\/\/sy\.test\/approvals\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
      reject_url: expect.stringMatching(/^http:\/\/sy\.test\/approvals\//),
      expires_at: expiresAt,
    });
  });

  it('an approval resumes the execution through the approved port with the decision as output', async () => {
    const id = await runToRest(t, gated, { draft: true, input: { version: '2' } });
    const step = await waitingStep(t, id);
    t.clock.advance(1000);
    const res = await decide(id, step.id, { decision: 'approve', comment: 'looks good', input: { ticket: 7 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const owner = await t.deps.db.selectFrom('users').select('id').where('email', '=', 'main@example.test').executeTakeFirstOrThrow();
    expect(res.body).toEqual({
      execution_id: id,
      step_id: step.id,
      decision: 'approve',
      comment: 'looks good',
      input: { ticket: 7 },
      decided_at: expect.stringMatching(/^2026-11-01T00:00:01\.\d{6}Z$/),
      decided_by: owner.id,
    });
    await t.deps.engine.idle();
    expect((await executionRow(t, id)).status).toBe('completed');
    const rows = await stepRows(t, id);
    const gate = rows.find((r) => r.node_id === 'gate')!;
    expect(gate.id).toBe(step.id);
    expect(gate.status).toBe('completed');
    expect(JSON.parse(gate.ports!)).toEqual(['approved']);
    expect(gate.output).toEqual({
      decision: 'approve',
      comment: 'looks good',
      input: { ticket: 7 },
      decided_at: res.body.decided_at,
      decided_by: res.body.decided_by,
    });
    expect(await ran(id)).toEqual(expect.arrayContaining(['gate', 'yes']));
    expect(rows.find((r) => r.node_id === 'no')?.status).toBe('skipped');
    // Decided: a second decision is refused.
    const again = await decide(id, step.id, { decision: 'reject' });
    expect(again.status).toBe(409);
    expect(again.body.errors[0].code).toBe('invalid_state');
  });

  it('a rejection leaves by the rejected port', async () => {
    const id = await runToRest(t, gated);
    const step = await waitingStep(t, id);
    expect((await decide(id, step.id, { decision: 'reject' })).status).toBe(200);
    await t.deps.engine.idle();
    const rows = await stepRows(t, id);
    const gate = rows.find((r) => r.node_id === 'gate')!;
    expect(JSON.parse(gate.ports!)).toEqual(['rejected']);
    expect(gate.output).toMatchObject({ decision: 'reject', comment: null, input: null });
    expect(rows.find((r) => r.node_id === 'no')?.status).toBe('completed');
    expect(rows.find((r) => r.node_id === 'yes')?.status).toBe('skipped');
  });

  it('of five concurrent decisions exactly one is recorded; the others are 409', async () => {
    const id = await runToRest(t, gated);
    const step = await waitingStep(t, id);
    const answers = await Promise.all(
      ['approve', 'reject', 'approve', 'reject', 'approve'].map((decision) => decide(id, step.id, { decision })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409]);
    const winner = answers.find((a) => a.status === 200)!.body;
    await t.deps.engine.idle();
    const gate = (await stepRows(t, id)).find((r) => r.node_id === 'gate')!;
    expect(gate.output.decision).toBe(winner.decision);
    const decisions = await t.deps.db.selectFrom('approval_decisions').selectAll().where('step_id', '=', step.id).execute();
    expect(decisions).toHaveLength(1);
  });

  it('a signed link decides once; its second use is 409, the other link too; a tampered one is 404', async () => {
    const id = await runToRest(t, gated);
    const step = await waitingStep(t, id);
    const { approve_url, reject_url } = step.output as { approve_url: string; reject_url: string };
    const tampered = `${approve_url.slice(0, -2)}${approve_url.endsWith('AA') ? 'BB' : 'AA'}`;
    const forged = await follow(tampered);
    expect(forged.status).toBe(404);
    expect(forged.body.errors[0].code).toBe('not_found');
    const first = await follow(reject_url);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ execution_id: id, step_id: step.id, decision: 'reject', decided_by: 'url' });
    expect((await follow(reject_url)).status).toBe(409);
    expect((await follow(approve_url)).status).toBe(409);
    await t.deps.engine.idle();
    expect(JSON.parse((await stepRows(t, id)).find((r) => r.node_id === 'gate')!.ports!)).toEqual(['rejected']);
  });

  it('after the time-out a link is 410 and the API 409; on_timeout fail fails the step with approval_timed_out', async () => {
    const id = await runToRest(t, gated);
    const step = await waitingStep(t, id);
    const { approve_url } = step.output as { approve_url: string };
    t.clock.advance(10 * MINUTE);
    const late = await follow(approve_url);
    expect(late.status).toBe(410);
    expect(late.body.errors[0].code).toBe('link_expired');
    const lateApi = await decide(id, step.id, { decision: 'approve' });
    expect(lateApi.status).toBe(409);
    expect(lateApi.body.errors[0].code).toBe('invalid_state');
    await t.deps.engine.runDue();
    await t.deps.engine.idle();
    const execution = await executionRow(t, id);
    expect(execution.status).toBe('failed');
    expect(JSON.parse(execution.error!)).toMatchObject({ code: 'approval_timed_out', node_id: 'gate' });
    const gate = (await stepRows(t, id)).find((r) => r.node_id === 'gate')!;
    expect(gate.status).toBe('failed');
    expect(gate.error).toMatchObject({ code: 'approval_timed_out', retryable: false });
  });

  it('on_timeout approve and reject decide as "timeout"', async () => {
    for (const [workflow, port] of [
      [approveOnTimeout, 'approved'],
      [rejectOnTimeout, 'rejected'],
    ] as const) {
      const id = await runToRest(t, workflow);
      t.clock.advance(MINUTE);
      await t.deps.engine.runDue();
      await t.deps.engine.idle();
      expect((await executionRow(t, id)).status).toBe('completed');
      const gate = (await stepRows(t, id)).find((r) => r.node_id === 'gate')!;
      expect(JSON.parse(gate.ports!)).toEqual([port]);
      expect(gate.output).toEqual({
        decision: port === 'approved' ? 'approve' : 'reject',
        comment: null,
        input: null,
        decided_at: expect.stringMatching(/^2026-11-01T00:\d\d:\d\d\.\d{6}Z$/),
        decided_by: 'timeout',
      });
    }
  });

  it('answers 422 with a pointer for a wrong decision or an unknown member, 403 to a read token, 404 to another workspace', async () => {
    const id = await runToRest(t, gated);
    const step = await waitingStep(t, id);
    const cases: [unknown, string][] = [
      [{ decision: 'maybe' }, '/data/decision'],
      [{}, '/data/decision'],
      [{ decision: 'approve', comment: 5 }, '/data/comment'],
      [{ decision: 'approve', approver: 'me' }, '/data/approver'],
    ];
    for (const [data, pointer] of cases) {
      const res = await decide(id, step.id, data);
      expect(res.status, JSON.stringify(data)).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe(pointer);
    }
    const read = await decide(id, step.id, { decision: 'approve' }, t.tokens.read);
    expect(read.status).toBe(403);
    const foreign = await decide(id, step.id, { decision: 'approve' }, t.tokens.other);
    expect(foreign.status).toBe(404);
    expect((await decide(id, '00000000-0000-7000-8000-000000000000', { decision: 'approve' })).status).toBe(404);
    // Still waiting: none of these decided.
    expect((await waitingStep(t, id)).status).toBe('waiting');
    expect((await decide(id, step.id, { decision: 'approve' })).status).toBe(200);
    await t.deps.engine.idle();
  });

  it('a step that is not an approval takes no decision', async () => {
    const waits = await workflowWith(t, 'Plain wait', {
      nodes: [node('start', 'webhook'), node('pause', 'wait', { duration_ms: MINUTE })],
      edges: [edge('start', 'pause')],
    });
    const id = await runToRest(t, waits);
    const pause = (await stepRows(t, id)).find((r) => r.node_id === 'pause')!;
    const res = await decide(id, pause.id, { decision: 'approve' });
    expect(res.status).toBe(409);
    expect(res.body.errors[0].detail).toBe('this step is not an approval step');
  });

  it('a decision made while another branch still runs resumes the approval once that branch is done', async () => {
    // The http branch holds the execution `running` (its request held open) after the approval's
    // waiting record was committed: the decision cannot make a running execution due, and on
    // PostgreSQL the worker's wait then commits the time-out as run_at (approval-runner.ts
    // `decidedWhileHeld` makes it due).
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = http.createServer((_req, res) => void held.then(() => res.end('{"ok":true}')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const branches = await workflowWith(t, 'Two branches', {
      nodes: [
        node('start', 'webhook'),
        node('gate', 'approval', { message: 'ok?', timeout_ms: 10 * MINUTE }),
        node('call', 'http', { url: `http://127.0.0.1:${port}/slow` }),
        node('yes', 'set', { values: { shipped: true } }),
      ],
      edges: [edge('start', 'gate'), edge('start', 'call'), edge('gate', 'yes', 'approved')],
    });
    try {
      const started = await t.request('POST', `/api/v1/workflows/${branches}/run`, { body: { data: { draft: true } } });
      const id = started.body.execution_id as string;
      let step: Awaited<ReturnType<typeof stepRows>>[number] | undefined;
      for (let i = 0; i < 200 && !step; i++) {
        step = (await stepRows(t, id)).find((r) => r.node_id === 'gate' && r.status === 'waiting');
        if (!step) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect((await executionRow(t, id)).status).toBe('running');
      // On PostgreSQL another process decides: the run here is not told, only the database is.
      const peer = dialect === 'postgres' ? await createPeerApp(t) : null;
      const decided = await (peer ?? t).request('POST', `/api/v1/executions/${id}/steps/${step!.id}/decision`, {
        body: { data: { decision: 'approve' } },
      });
      expect(decided.status).toBe(200);
      await peer?.close();
      release();
      await t.deps.engine.idle();
      expect((await executionRow(t, id)).status).toBe('completed');
      expect(await ran(id)).toEqual(expect.arrayContaining(['gate', 'call', 'yes']));
    } finally {
      release();
      server.close();
    }
  });

  describe('after a restart', () => {
    it('a decision still resumes an execution whose run is no longer in memory', async () => {
      const id = await runToRest(t, gated);
      const step = await waitingStep(t, id);
      // The engine stops (its parked runs are dropped); only the database is left. Alone (SQLite)
      // it starts again; on PostgreSQL another process decides and runs it.
      await t.deps.engine.stop();
      const peer = dialect === 'postgres' ? await createPeerApp(t) : null;
      if (!peer) await t.deps.engine.start();
      const decided = await (peer ?? t).request('POST', `/api/v1/executions/${id}/steps/${step.id}/decision`, {
        body: { data: { decision: 'approve' } },
      });
      expect(decided.status).toBe(200);
      await (peer ?? t).deps.engine.idle();
      await peer?.close();
      expect((await executionRow(t, id)).status).toBe('completed');
      expect(await ran(id)).toEqual(expect.arrayContaining(['gate', 'yes']));
    });
  });
});
