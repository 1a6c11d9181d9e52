import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, runToRest, stepRows, workflowWith } from './support/engine-helpers.js';
import { startFakeSlack, type FakeSlack } from './support/fake-slack.js';
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
  let slack: FakeSlack;
  let installationId: string;
  beforeAll(async () => {
    slack = await startFakeSlack();
    t = await createTestApp(dialect, { slackApiUrl: slack.apiUrl });
    installationId = (
      await t.deps.apps.install({
        provider: 'slack',
        workspace: { id: t.workspaces.main },
        accountId: 'T0MAIN',
        botUserId: 'U0BOT',
        botId: 'B0BOT',
        credentials: { bot_token: 'xoxb-main-token' },
      })
    ).id;
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
  afterAll(async () => {
    await t.close();
    await slack.close();
  });

  const decide = (executionId: string, stepId: string, data: unknown, token?: string) =>
    t.request('POST', `/api/v1/executions/${executionId}/steps/${stepId}/decision`, { body: { data }, ...(token ? { token } : {}) });
  const follow = (url: string, body?: unknown) => t.request('POST', new URL(url).pathname, { token: null, ...(body ? { body } : {}) });
  const ran = async (executionId: string) => (await stepRows(t, executionId)).filter((r) => r.status === 'completed').map((r) => r.node_id);

  it('waits with the signed links in the step output, the execution waiting until the time-out', async () => {
    const id = await runToRest(t, gated, { draft: true, input: { version: '1.2' } });
    expect((await executionRow(t, id)).status).toBe('waiting');
    const step = await waitingStep(t, id);
    const expiresAt = new Date(Date.parse(t.clock.now()) + 10 * MINUTE).toISOString().replace('Z', '000Z');
    expect(step.kind).toBe('approval');
    expect(step.resume_at).toBe(expiresAt);
    expect((await executionRow(t, id)).run_at).toBe(expiresAt);
    expect(step.output).toEqual({
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
    expect(res.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
    const owner = await t.deps.db.selectFrom('users').select('id').where('email', '=', 'main@example.test').executeTakeFirstOrThrow();
    // The step's record as it stands after the decision's commit (the run resumes it afterwards).
    expect(res.body.data).toMatchObject({ type: 'execution-step', id: step.id });
    expect(res.body.data.attributes).toMatchObject({ node_id: 'gate', kind: 'approval', attempt: 1, output: step.output });
    expect(['waiting', 'completed']).toContain(res.body.data.attributes.status);
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
      decided_at: expect.stringMatching(/^2026-11-01T00:00:01\.\d{6}Z$/),
      decided_by: owner.id,
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
    await t.deps.engine.idle();
    const gate = (await stepRows(t, id)).find((r) => r.node_id === 'gate')!;
    const decisions = ['approve', 'reject', 'approve', 'reject', 'approve'];
    expect(gate.output.decision).toBe(decisions[answers.findIndex((a) => a.status === 200)]);
    const recorded = await t.deps.db.selectFrom('approval_decisions').selectAll().where('step_id', '=', step.id).execute();
    expect(recorded).toHaveLength(1);
  });

  it('a signed link decides once; its second use is 410, the other link too; a tampered one is 404', async () => {
    const id = await runToRest(t, gated);
    const step = await waitingStep(t, id);
    const { approve_url, reject_url } = step.output as { approve_url: string; reject_url: string };
    const tampered = `${approve_url.slice(0, -2)}${approve_url.endsWith('AA') ? 'BB' : 'AA'}`;
    const forged = await follow(tampered);
    expect(forged.status).toBe(404);
    expect(forged.body.errors[0].code).toBe('not_found');
    const first = await follow(reject_url, { comment: 'not today', input: { why: 'freeze' } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    expect(first.body).toEqual({ decision: 'reject' });
    const used = await follow(reject_url);
    expect(used.status).toBe(410);
    expect(used.body.errors[0].code).toBe('link_used');
    expect((await follow(approve_url)).status).toBe(410);
    await t.deps.engine.idle();
    const gate = (await stepRows(t, id)).find((r) => r.node_id === 'gate')!;
    expect(JSON.parse(gate.ports!)).toEqual(['rejected']);
    expect(gate.output).toMatchObject({ decision: 'reject', comment: 'not today', input: { why: 'freeze' }, decided_by: 'url' });
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

  it('a link reads an optional JSON body {comment, input}; any other body gives neither', async () => {
    const cases: [RequestInit['body'] | undefined, Record<string, string>, unknown, unknown][] = [
      [JSON.stringify({ comment: 'fine', input: [1, 2] }), { 'content-type': 'application/json' }, 'fine', [1, 2]],
      [JSON.stringify({ comment: 'ok' }), { 'content-type': 'application/vnd.api+json; charset=utf-8' }, 'ok', null],
      ['comment=hi', { 'content-type': 'application/x-www-form-urlencoded' }, null, null],
      ['{not json', { 'content-type': 'application/json' }, null, null],
      [undefined, {}, null, null],
    ];
    for (const [body, headers, comment, input] of cases) {
      const id = await runToRest(t, gated);
      const { approve_url } = (await waitingStep(t, id)).output as { approve_url: string };
      const res = await t.app.inject({ method: 'POST', url: new URL(approve_url).pathname, headers, ...(body ? { payload: body } : {}) });
      expect(res.statusCode, `${String(body)}: ${res.body}`).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ decision: 'approve' });
      await t.deps.engine.idle();
      const gate = (await stepRows(t, id)).find((r) => r.node_id === 'gate')!;
      expect(gate.output, String(body)).toMatchObject({ decision: 'approve', comment, input, decided_by: 'url' });
    }
    // A comment that is not a string is refused, and the link stays usable.
    const id = await runToRest(t, gated);
    const { approve_url } = (await waitingStep(t, id)).output as { approve_url: string };
    const bad = await follow(approve_url, { comment: 5 });
    expect(bad.status).toBe(400);
    expect((await follow(approve_url)).status).toBe(200);
    await t.deps.engine.idle();
  });

  it('the decision answers the step record as an execution-step document, with the fields asked for', async () => {
    const id = await runToRest(t, gated);
    const step = await waitingStep(t, id);
    const res = await t.request('POST', `/api/v1/executions/${id}/steps/${step.id}/decision?fields%5Bexecution-step%5D=node_id,status`, {
      body: { data: { decision: 'reject' } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.type).toBe('execution-step');
    expect(res.body.data.id).toBe(step.id);
    expect(Object.keys(res.body.data.attributes).sort()).toEqual(['node_id', 'status']);
    expect(res.body.data.relationships.workflow_execution.data).toEqual({ type: 'execution', id });
    await t.deps.engine.idle();
  });

  it('timeout_ms defaults to one day and takes at most 30 days', async () => {
    const unbounded = await workflowWith(t, 'Default time-out', approvalGraph({ message: 'ok?' }));
    const id = await runToRest(t, unbounded);
    const step = await waitingStep(t, id);
    expect(step.resume_at).toBe(new Date(Date.parse(t.clock.now()) + 86_400_000).toISOString().replace('Z', '000Z'));
    const long = await t.request('POST', '/api/v1/workflows', { body: { data: { type: 'workflow', attributes: { name: 'Too long' } } } });
    const graph = approvalGraph({ message: 'ok?', timeout_ms: 2_592_000_001 });
    const put = await t.request('PUT', `/api/v1/workflows/${long.body.data.id}/graph`, { body: { data: { graph, layout: false } } });
    expect(put.status).toBe(422);
    const max = approvalGraph({ message: 'ok?', timeout_ms: 2_592_000_000 });
    expect(
      (await t.request('PUT', `/api/v1/workflows/${long.body.data.id}/graph`, { body: { data: { graph: max, layout: false } } })).status,
    ).toBe(200);
  });

  it('notify sends an http request and a Slack message with the rendered links when the step starts waiting', async () => {
    const received: { url: string; body: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ url: req.url ?? '', body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const notified = await workflowWith(
        t,
        'Notified',
        approvalGraph({
          message: 'Ship {{ trigger.body.version }}?',
          timeout_ms: 10 * MINUTE,
          notify: {
            http: {
              method: 'POST',
              url: `http://127.0.0.1:${port}/hook`,
              body: { text: '{{ approval.message }}', approve: '{{ approval.approve_url }}', until: '{{ approval.expires_at }}' },
            },
            slack: {
              installation_id: installationId,
              channel: 'C0APPROVE',
              text: '{{ approval.message }} approve: {{ approval.approve_url }} reject: {{ approval.reject_url }}',
            },
          },
        }),
      );
      const id = await runToRest(t, notified, { draft: true, input: { version: '3.1' } });
      const step = await waitingStep(t, id);
      const { approve_url, reject_url, expires_at } = step.output as Record<string, string>;
      expect(Object.keys(step.output).sort()).toEqual(['approve_url', 'expires_at', 'reject_url']);
      expect(received).toHaveLength(1);
      expect(received[0]!.url).toBe('/hook');
      expect(JSON.parse(received[0]!.body)).toEqual({ text: 'Ship 3.1?', approve: approve_url, until: expires_at });
      const post = slack.calls.filter((c) => c.method === 'chat.postMessage').at(-1)!;
      expect(post.headers.authorization).toBe('Bearer xoxb-main-token');
      expect(post.body).toMatchObject({ channel: 'C0APPROVE', text: `Ship 3.1? approve: ${approve_url} reject: ${reject_url}` });
      expect(JSON.parse(step.logs!)).toEqual(['notify http: answered 204', expect.stringMatching(/^notify slack: posted to C0APPROVE/)]);
      // The links still decide.
      expect((await follow(approve_url!)).status).toBe(200);
      await t.deps.engine.idle();
      expect((await executionRow(t, id)).status).toBe('completed');
    } finally {
      server.close();
    }
  });

  it('a notification that fails is logged on the step, which waits on', async () => {
    slack.script('chat.postMessage', { body: { ok: false, error: 'channel_not_found' } });
    const failing = await workflowWith(
      t,
      'Badly notified',
      approvalGraph({
        message: 'ok?',
        timeout_ms: 10 * MINUTE,
        notify: {
          http: { method: 'POST', url: 'http://127.0.0.1:1/closed' },
          slack: { channel: 'C0GONE', text: 'ok? {{ approval.approve_url }}' },
        },
      }),
    );
    const id = await runToRest(t, failing);
    const step = await waitingStep(t, id);
    expect((await executionRow(t, id)).status).toBe('waiting');
    expect(JSON.parse(step.logs!)).toEqual([
      expect.stringMatching(/^notify http failed: /),
      expect.stringMatching(/^notify slack failed: .*channel_not_found/),
    ]);
    expect((await decide(id, step.id, { decision: 'approve' })).status).toBe(200);
    await t.deps.engine.idle();
    const gate = (await stepRows(t, id)).find((r) => r.node_id === 'gate')!;
    expect(gate.status).toBe('completed');
    expect(gate.logs).toEqual(step.logs);
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
