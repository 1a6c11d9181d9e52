import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { formatMicros, type Clock } from '../src/lib/clock.js';
import { Scheduler } from '../src/schedules/scheduler.js';
import { describeEachDialect } from './support/dialects.js';
import { executionRow, node, stepRows, workflowWith } from './support/engine-helpers.js';
import { createPeerApp, createTestApp, type TestApp } from './support/test-app.js';

/** A workflow whose schedule trigger feeds a set step, so a fire is a whole execution. */
function scheduled(config: Record<string, unknown>) {
  return {
    nodes: [node('tick', 'schedule', config), node('note', 'set', { values: { seen: '{{ trigger.payload.scheduled_at }}' } })],
    edges: [{ source: 'tick', target: 'note' }],
  };
}

/** Fire times of a workflow's executions, in order, with their fired_at (the trigger's payload). */
async function fires(t: TestApp, workflowId: string): Promise<{ scheduled_at: string; fired_at: string; missed: boolean }[]> {
  const rows = await t.deps.db
    .selectFrom('executions')
    .select(['inputs', 'inserted_at'])
    .where('workflow_id', '=', workflowId)
    .orderBy('inserted_at')
    .execute();
  return rows.map((row) => JSON.parse(row.inputs!).payload);
}

async function scheduleRows(t: TestApp, workflowId: string) {
  return t.deps.db.selectFrom('schedules').selectAll().where('workflow_id', '=', workflowId).execute();
}

/** Moves the clock to `iso` and fires what is due there, as the scheduler's timer would. */
async function at(t: TestApp, iso: string, scheduler = t.deps.scheduler) {
  t.clock.set(iso);
  const counts = await scheduler.runDue();
  await t.deps.engine.idle();
  return counts;
}

describeEachDialect('schedules', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  describe('the catalog and validation', () => {
    it('lists the schedule step as a start trigger with its config schema', async () => {
      const res = await t.request('GET', '/api/v1/step-templates?filter[slug][eq]=schedule');
      expect(res.status).toBe(200);
      const [step] = res.body.data;
      expect(step.attributes).toMatchObject({
        slug: 'schedule',
        category: ['start'],
        ports: { in: [], out: ['out'] },
        default_config: { catch_up: 'skip' },
      });
      expect(Object.keys(step.attributes.canvas_schema.properties).sort()).toEqual(['catch_up', 'cron', 'interval_ms', 'timezone']);
      expect(step.attributes.canvas_schema.properties.interval_ms).toEqual({ type: 'integer', minimum: 1000, maximum: 31_536_000_000 });
      expect(step.attributes.canvas_schema.properties.catch_up).toEqual({ enum: ['skip', 'run_once'] });
      const output = JSON.parse(step.attributes.output_schema);
      expect(output.required).toEqual(['payload', 'event']);
      expect(output.properties.payload.required).toEqual(['scheduled_at', 'fired_at', 'missed']);
    });

    it('refuses a bad cron, an unknown time zone and a cron together with an interval, with pointers, and stores nothing', async () => {
      const created = await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Bad schedules' } } });
      const id = created.body.data.id as string;
      const graph = {
        nodes: [
          node('a', 'schedule', { cron: '0 25 * * *' }),
          node('b', 'schedule', { cron: '0 9 * * *', timezone: 'Europe/Atlantis' }),
          node('c', 'schedule', { cron: '0 9 * * *', interval_ms: 60_000 }),
          node('d', 'schedule', { cron: '0 0 30 2 *' }),
          node('e', 'schedule', { interval_ms: 999 }),
          node('f', 'schedule', { interval_ms: 60_000, timezone: 'Europe/Berlin' }),
          node('g', 'schedule', { interval_seconds: 60 }),
        ],
        edges: [],
      };
      const res = await t.request('PUT', `/api/v1/workflows/${id}/graph`, { body: { data: { graph, layout: false } } });
      expect(res.status).toBe(422);
      const errors = res.body.errors.map((e: { status: string; code: string; source: { pointer: string }; detail: string }) => ({
        status: e.status,
        code: e.code,
        pointer: e.source.pointer,
        detail: e.detail,
      }));
      expect(errors).toEqual([
        {
          status: '422',
          code: 'invalid_config',
          pointer: '/data/graph/nodes/0/config/cron',
          detail: expect.stringContaining('Invalid value for hour: 25'),
        },
        {
          status: '422',
          code: 'invalid_config',
          pointer: '/data/graph/nodes/1/config/timezone',
          detail: expect.stringContaining('"Europe/Atlantis" is not one'),
        },
        {
          status: '422',
          code: 'invalid_config',
          pointer: '/data/graph/nodes/2/config/interval_ms',
          detail: 'config.interval_ms cannot be given together with config.cron; keep one of them.',
        },
        {
          status: '422',
          code: 'invalid_config',
          pointer: '/data/graph/nodes/3/config/cron',
          detail: expect.stringContaining('never fires'),
        },
        {
          status: '422',
          code: 'invalid_config',
          pointer: '/data/graph/nodes/4/config/interval_ms',
          detail: 'config.interval_ms must be at least 1000.',
        },
        {
          status: '422',
          code: 'invalid_config',
          pointer: '/data/graph/nodes/5/config/timezone',
          detail: 'config.timezone applies to config.cron only; an interval counts from activation.',
        },
        {
          status: '422',
          code: 'invalid_config',
          pointer: '/data/graph/nodes/6/config/interval_seconds',
          detail: 'config.interval_seconds is not a known field.',
        },
      ]);
      const read = await t.request('GET', `/api/v1/workflows/${id}?fields[workflow]=graph`);
      expect(read.body.data.attributes.graph.nodes).toEqual([]);
    });
  });

  describe('firing', () => {
    it('follows Europe/Berlin across spring forward: 02:30 local runs at 03:00 on the day it does not exist', async () => {
      t.clock.set('2026-03-27T12:00:00.000000Z');
      const id = await workflowWith(t, 'Berlin spring', scheduled({ cron: '30 2 * * *', timezone: 'Europe/Berlin' }), { activate: true });
      // Every half hour for three days, as a running scheduler would look.
      for (let ms = Date.parse('2026-03-27T12:30:00Z'); ms <= Date.parse('2026-03-30T12:00:00Z'); ms += 30 * 60_000)
        await at(t, new Date(ms).toISOString());
      expect((await fires(t, id)).map((f) => f.scheduled_at)).toEqual([
        '2026-03-28T01:30:00.000000Z',
        '2026-03-29T01:00:00.000000Z',
        '2026-03-30T00:30:00.000000Z',
      ]);
    });

    it('follows Europe/Berlin across fall back: 02:30 local happens twice and runs once', async () => {
      t.clock.set('2026-10-24T12:00:00.000000Z');
      const id = await workflowWith(t, 'Berlin autumn', scheduled({ cron: '30 2 * * *', timezone: 'Europe/Berlin' }), { activate: true });
      for (let ms = Date.parse('2026-10-24T12:30:00Z'); ms <= Date.parse('2026-10-26T12:00:00Z'); ms += 30 * 60_000)
        await at(t, new Date(ms).toISOString());
      expect((await fires(t, id)).map((f) => f.scheduled_at)).toEqual(['2026-10-25T00:30:00.000000Z', '2026-10-26T01:30:00.000000Z']);
    });

    it('runs the whole workflow with {payload: {scheduled_at, fired_at, missed}, event} as the trigger output, on the schedule node only', async () => {
      t.clock.set('2026-05-01T08:00:00.000000Z');
      const id = await workflowWith(
        t,
        'Payload',
        {
          nodes: [...scheduled({ cron: '*/15 * * * * *' }).nodes, node('hook', 'webhook', {})],
          edges: [{ source: 'tick', target: 'note' }],
        },
        { activate: true },
      );
      await at(t, '2026-05-01T08:00:15.250000Z');
      const [execution] = await t.deps.db.selectFrom('executions').select('id').where('workflow_id', '=', id).execute();
      expect((await executionRow(t, execution!.id)).status).toBe('completed');
      const steps = await stepRows(t, execution!.id);
      const byNode = Object.fromEntries(steps.map((s) => [s.node_id, s]));
      const [row] = await scheduleRows(t, id);
      expect(byNode.tick!.output).toEqual({
        payload: {
          scheduled_at: '2026-05-01T08:00:15.000000Z',
          fired_at: expect.stringMatching(/^2026-05-01T08:00:15\.250/),
          missed: false,
        },
        event: {
          type: 'schedule.fired',
          schedule_id: row!.id,
          node_id: 'tick',
          cron: '*/15 * * * * *',
          timezone: 'UTC',
          interval_ms: null,
          catch_up: 'skip',
        },
      });
      expect(byNode.hook!.status).toBe('skipped');
      expect(byNode.note!.output).toEqual({ seen: '2026-05-01T08:00:15.000000Z' });
      await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });

    it('fires interval schedules on a grid from activation, a late fire not shifting the next', async () => {
      t.clock.set('2026-06-01T00:00:00.000000Z');
      const id = await workflowWith(t, 'Every 90 s', scheduled({ interval_ms: 90_000 }), { activate: true });
      await at(t, '2026-06-01T00:01:00.000000Z');
      await at(t, '2026-06-01T00:01:30.000000Z');
      await at(t, '2026-06-01T00:03:00.000000Z');
      await at(t, '2026-06-01T00:04:40.000000Z');
      expect((await fires(t, id)).map((f) => f.scheduled_at)).toEqual([
        '2026-06-01T00:01:30.000000Z',
        '2026-06-01T00:03:00.000000Z',
        '2026-06-01T00:04:30.000000Z',
      ]);
      expect((await scheduleRows(t, id))[0]!.next_fire_at).toBe('2026-06-01T00:06:00.000000Z');
      const [execution] = await t.deps.db
        .selectFrom('executions')
        .select('inputs')
        .where('workflow_id', '=', id)
        .orderBy('inserted_at')
        .execute();
      expect(JSON.parse(execution!.inputs!).event).toMatchObject({ cron: null, timezone: null, interval_ms: 90_000 });
      await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });

    it('counts interval_ms in milliseconds, sub-second parts included', async () => {
      t.clock.set('2026-06-02T00:00:00.000000Z');
      const id = await workflowWith(t, 'Every 1.5 s', scheduled({ interval_ms: 1_500 }), { activate: true });
      expect((await scheduleRows(t, id))[0]!.next_fire_at).toBe('2026-06-02T00:00:01.500000Z');
      await at(t, '2026-06-02T00:00:01.500000Z');
      await at(t, '2026-06-02T00:00:03.000000Z');
      expect((await fires(t, id)).map((f) => f.scheduled_at)).toEqual(['2026-06-02T00:00:01.500000Z', '2026-06-02T00:00:03.000000Z']);
      await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });

    it('keeps a year-long interval_ms (past a 32-bit integer) exactly', async () => {
      t.clock.set('2026-06-03T00:00:00.000000Z');
      const id = await workflowWith(t, 'Yearly', scheduled({ interval_ms: 31_536_000_000 }), { activate: true });
      const [row] = await scheduleRows(t, id);
      expect(Number(row!.interval_ms)).toBe(31_536_000_000);
      expect(row!.next_fire_at).toBe('2027-06-03T00:00:00.000000Z');
      // Publishing again with the same interval keeps the row's fire time (the bigint compares equal).
      t.clock.set('2026-06-04T00:00:00.000000Z');
      expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
      expect((await scheduleRows(t, id))[0]!.next_fire_at).toBe('2027-06-03T00:00:00.000000Z');
      await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });

    it('never fires a disabled schedule node, and starts it when it is enabled and activated again', async () => {
      t.clock.set('2026-06-05T00:00:00.000000Z');
      const graph = (disabled: boolean) => {
        const shape = scheduled({ cron: '0 * * * *' });
        return { ...shape, nodes: [{ ...shape.nodes[0]!, disabled }, shape.nodes[1]!] };
      };
      const id = await workflowWith(t, 'Disabled schedule', graph(true), { activate: true });
      expect(await scheduleRows(t, id)).toEqual([]);
      expect((await at(t, '2026-06-05T01:00:00.000000Z')).fired).toBe(0);
      expect(await fires(t, id)).toEqual([]);

      expect(
        (await t.request('PUT', `/api/v1/workflows/${id}/graph`, { body: { data: { graph: graph(false), layout: false } } })).status,
      ).toBe(200);
      expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
      await at(t, '2026-06-05T02:00:00.000000Z');
      expect((await fires(t, id)).map((f) => f.scheduled_at)).toEqual(['2026-06-05T02:00:00.000000Z']);

      // Disabled again and published: its row goes, and the next hour starts nothing.
      expect(
        (await t.request('PUT', `/api/v1/workflows/${id}/graph`, { body: { data: { graph: graph(true), layout: false } } })).status,
      ).toBe(200);
      expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
      expect(await scheduleRows(t, id)).toEqual([]);
      await at(t, '2026-06-05T03:00:00.000000Z');
      expect(await fires(t, id)).toHaveLength(1);
      await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });

    it('drops the fire of a stored row whose node is disabled in its snapshot (a row from before activation skipped them)', async () => {
      t.clock.set('2026-06-06T00:00:00.000000Z');
      const shape = scheduled({ cron: '0 * * * *' });
      const id = await workflowWith(
        t,
        'Old row',
        { ...shape, nodes: [{ ...shape.nodes[0]!, disabled: true }, shape.nodes[1]!] },
        { activate: true },
      );
      const workflow = await t.deps.db
        .selectFrom('workflows')
        .select(['workspace_id', 'active_snapshot_id'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const now = '2026-06-06T00:00:00.000000Z';
      await t.deps.db
        .insertInto('schedules')
        .values({
          id: `old-${dialect}`,
          workspace_id: workflow.workspace_id,
          workflow_id: id,
          snapshot_id: workflow.active_snapshot_id!,
          node_id: 'tick',
          cron: '0 * * * *',
          timezone: 'UTC',
          interval_ms: null,
          catch_up: 'skip',
          anchor_at: now,
          next_fire_at: '2026-06-06T01:00:00.000000Z',
          last_fired_at: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      expect(await at(t, '2026-06-06T01:00:00.000000Z')).toEqual({ fired: 0, skipped: 1 });
      expect(await fires(t, id)).toEqual([]);
      expect((await scheduleRows(t, id))[0]!.next_fire_at).toBe('2026-06-06T02:00:00.000000Z');
      await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });

    it('stops firing when the workflow is deactivated or deleted, and resumes at the next time (no catch-up) when activated again', async () => {
      t.clock.set('2026-07-01T00:00:00.000000Z');
      const id = await workflowWith(t, 'On and off', scheduled({ cron: '0 * * * *', catch_up: 'run_once' }), { activate: true });
      await at(t, '2026-07-01T01:00:00.000000Z');
      expect((await t.request('POST', `/api/v1/workflows/${id}/deactivate`)).status).toBe(200);
      expect(await scheduleRows(t, id)).toEqual([]);
      await at(t, '2026-07-01T02:00:00.000000Z');
      await at(t, '2026-07-01T03:00:00.000000Z');
      expect((await fires(t, id)).map((f) => f.scheduled_at)).toEqual(['2026-07-01T01:00:00.000000Z']);

      t.clock.set('2026-07-01T03:10:00.000000Z');
      expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
      await at(t, '2026-07-01T04:00:00.000000Z');
      expect((await fires(t, id)).map((f) => f.scheduled_at)).toEqual(['2026-07-01T01:00:00.000000Z', '2026-07-01T04:00:00.000000Z']);

      expect((await t.request('DELETE', `/api/v1/workflows/${id}`)).status).toBe(204);
      expect(await scheduleRows(t, id)).toEqual([]);
      expect((await at(t, '2026-07-01T05:00:00.000000Z')).fired).toBe(0);
    });

    it('keeps the coming fire time when an active workflow is published again with the same timing', async () => {
      t.clock.set('2026-08-01T00:00:00.000000Z');
      const id = await workflowWith(t, 'Republished', scheduled({ cron: '0 * * * *' }), { activate: true });
      const [before] = await scheduleRows(t, id);
      t.clock.set('2026-08-01T00:30:00.000000Z');
      expect((await t.request('POST', `/api/v1/workflows/${id}/activate`)).status).toBe(200);
      const [after] = await scheduleRows(t, id);
      expect(after!.next_fire_at).toBe(before!.next_fire_at);
      expect(after!.snapshot_id).not.toBe(before!.snapshot_id);
      await at(t, '2026-08-01T01:00:00.000000Z');
      const [execution] = await t.deps.db.selectFrom('executions').select('workflow_snapshot_id').where('workflow_id', '=', id).execute();
      expect(execution!.workflow_snapshot_id).toBe(after!.snapshot_id);
      await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });
  });

  describe('restarts and several schedulers', () => {
    it('after a restart, skip drops the missed fires and run_once starts one execution for them; both then go on at the next time', async () => {
      t.clock.set('2026-09-01T00:00:00.000000Z');
      const skip = await workflowWith(t, 'Skip', scheduled({ cron: '0 * * * *' }), { activate: true });
      const once = await workflowWith(t, 'Run once', scheduled({ cron: '0 * * * *', catch_up: 'run_once' }), { activate: true });
      await at(t, '2026-09-01T01:00:00.000000Z');

      // The process stops (its scheduler never looks again); a new one starts hours later with
      // nothing but the database.
      t.clock.set('2026-09-01T05:20:00.000000Z');
      const restarted = new Scheduler({ db: t.deps.db, dialect, engine: t.deps.engine, clock: t.clock, timers: false });
      const counts = await at(t, '2026-09-01T05:20:00.000000Z', restarted);
      expect(counts).toEqual({ fired: 1, skipped: 1 });
      expect((await scheduleRows(t, skip))[0]!.next_fire_at).toBe('2026-09-01T06:00:00.000000Z');
      expect((await scheduleRows(t, once))[0]!.next_fire_at).toBe('2026-09-01T06:00:00.000000Z');
      // Looking again at once fires nothing more.
      expect(await at(t, '2026-09-01T05:21:00.000000Z', restarted)).toEqual({ fired: 0, skipped: 0 });
      await at(t, '2026-09-01T06:00:00.000000Z', restarted);

      expect((await fires(t, skip)).map((f) => f.scheduled_at)).toEqual(['2026-09-01T01:00:00.000000Z', '2026-09-01T06:00:00.000000Z']);
      const onceFires = await fires(t, once);
      expect(onceFires.map((f) => f.scheduled_at)).toEqual([
        '2026-09-01T01:00:00.000000Z',
        '2026-09-01T02:00:00.000000Z',
        '2026-09-01T06:00:00.000000Z',
      ]);
      expect(onceFires[1]!.fired_at).toMatch(/^2026-09-01T05:20:00/);
      expect(onceFires.map((f) => f.missed)).toEqual([false, true, false]);
      await restarted.stop();
      for (const id of [skip, once]) await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });

    it('a fire a little late (within a minute, before the next one) still fires under skip', async () => {
      t.clock.set('2026-09-02T00:00:00.000000Z');
      const id = await workflowWith(t, 'Late', scheduled({ cron: '0 * * * *' }), { activate: true });
      await at(t, '2026-09-02T01:00:40.000000Z');
      expect((await fires(t, id)).map((f) => f.scheduled_at)).toEqual(['2026-09-02T01:00:00.000000Z']);
      await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });

    it('two schedulers looking at once never fire a time twice', async () => {
      t.clock.set('2026-10-01T00:00:00.000000Z');
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) ids.push(await workflowWith(t, `Shared ${i}`, scheduled({ cron: '* * * * *' }), { activate: true }));
      // On PostgreSQL the second scheduler is another process's (own pool, own engine); on SQLite
      // a second scheduler in the one process.
      const peer = dialect === 'postgres' ? await createPeerApp(t) : null;
      const second = peer
        ? peer.deps.scheduler
        : new Scheduler({ db: t.deps.db, dialect, engine: t.deps.engine, clock: t.clock, timers: false, batchSize: 7 });
      const first = new Scheduler({ db: t.deps.db, dialect, engine: t.deps.engine, clock: t.clock, timers: false, batchSize: 7 });
      let total = 0;
      for (let minute = 1; minute <= 3; minute++) {
        t.clock.set(`2026-10-01T00:0${minute}:00.000000Z`);
        const counts = await Promise.all([first.runDue(), second.runDue(), first.runDue()]);
        total += counts.reduce((sum, c) => sum + c.fired, 0);
      }
      await t.deps.engine.idle();
      await peer?.deps.engine.idle();
      expect(total).toBe(120);
      const rows = await t.deps.db.selectFrom('executions').select(['workflow_id', 'inputs']).where('workflow_id', 'in', ids).execute();
      const keys = rows.map((row) => `${row.workflow_id} ${JSON.parse(row.inputs!).payload.scheduled_at}`);
      expect(keys).toHaveLength(120);
      expect(new Set(keys).size).toBe(120);
      await peer?.close();
      for (const id of ids) await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
    });

    it('wakes at the earliest stored fire time by its timer, without waiting for the poll', async () => {
      // A clock that runs in real time from an injected origin: the timer's delay is real.
      const offset = Date.parse('2026-12-01T00:00:00Z') - Date.now();
      const running: Clock = { nowMs: () => Date.now() + offset, now: () => formatMicros((Date.now() + offset) * 1000) };
      t.clock.set(running.now());
      const id = await workflowWith(t, 'Every second', scheduled({ cron: '* * * * * *' }), { activate: true });
      // The poll would look only after ten minutes: every fire below comes from the timer.
      const timed = new Scheduler({ db: t.deps.db, dialect, engine: t.deps.engine, clock: running, timers: true, pollMs: 600_000 });
      timed.start();
      try {
        await vi.waitFor(() => expect(timed.counts.fired).toBeGreaterThanOrEqual(3), { timeout: 30_000, interval: 50 });
      } finally {
        await timed.stop();
      }
      await t.deps.engine.idle();
      await t.request('POST', `/api/v1/workflows/${id}/deactivate`);
      const times = (await fires(t, id)).map((f) => Date.parse(f.scheduled_at));
      expect(times.length).toBeGreaterThanOrEqual(3);
      // One fire per second, each for its own whole second.
      for (const time of times) expect(time % 1000).toBe(0);
      expect(new Set(times).size).toBe(times.length);
    });
  });
});
