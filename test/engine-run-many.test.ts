import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { edge, executionRow, node, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** One platform event starting several workflows: one commit, all or none (Engine.runMany). */
describeEachDialect('runMany', (dialect) => {
  let t: TestApp;
  const starts: { workflowId: string; snapshotId: string }[] = [];
  beforeAll(async () => {
    t = await createTestApp(dialect);
    await sql`create table run_many_marks (event_id text primary key)`.execute(t.deps.db);
    for (const name of ['First', 'Second', 'Third']) {
      const id = await workflowWith(
        t,
        name,
        {
          nodes: [node('hook', 'webhook'), node('tag', 'set', { values: { who: name, text: '{{ trigger.body.text }}' } })],
          edges: [edge('hook', 'tag')],
        },
        { activate: true },
      );
      const row = await t.deps.db.selectFrom('workflows').select('active_snapshot_id').where('id', '=', id).executeTakeFirstOrThrow();
      starts.push({ workflowId: id, snapshotId: row.active_snapshot_id! });
    }
  });
  afterAll(() => t.close());

  const event = (text: string) =>
    starts.map((s) => ({
      workspaceId: t.workspaces.main,
      workflowId: s.workflowId,
      snapshotId: s.snapshotId,
      userId: null,
      trigger: { method: 'EVENT', headers: {}, query: {}, body: { text } },
    }));
  const mark = (eventId: string) => async (trx: Parameters<NonNullable<Parameters<TestApp['deps']['engine']['runMany']>[1]>>[0]) => {
    await sql`insert into run_many_marks (event_id) values (${eventId})`.execute(trx);
  };
  const count = async () =>
    Number(
      (
        await t.deps.db
          .selectFrom('executions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('creates every execution in one commit with the extra write, and runs them all', async () => {
    const started = await t.deps.engine.runMany(event('hello'), mark('evt-1'));
    expect(started).toHaveLength(3);
    expect(new Set(started.map((s) => s.status))).toEqual(new Set(['pending']));
    await t.deps.engine.idle();
    const outputs = await Promise.all(started.map(async (s) => JSON.parse((await executionRow(t, s.execution_id)).output!)));
    expect(outputs).toEqual([
      { who: 'First', text: 'hello' },
      { who: 'Second', text: 'hello' },
      { who: 'Third', text: 'hello' },
    ]);
  });

  it('creates none when the extra write fails (a redelivered event id)', async () => {
    const before = await count();
    await expect(t.deps.engine.runMany(event('again'), mark('evt-1'))).rejects.toThrow();
    await t.deps.engine.idle();
    expect(await count()).toBe(before);
  });
});
