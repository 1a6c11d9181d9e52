import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { up as migration0015 } from '../src/db/migrations/0015-schedule-interval-ms.js';
import { describeEachDialect } from './support/dialects.js';
import { node, workflowWith } from './support/engine-helpers.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Migration 0015 renames `schedules.interval_seconds` to `interval_ms` (bigint on PostgreSQL)
 * and converts the rows written before it. Here the table is put back as 0012 left it, with a
 * row in seconds, and 0015's `up` runs again (directly: later migrations already ran, and the
 * migrator refuses to run one out of order).
 */
describeEachDialect('migration 0015: schedules keep interval_ms', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('turns the seconds of rows written before it into milliseconds, leaves cron rows alone, and holds a year of them', async () => {
    const { db } = t.deps;
    t.clock.set('2026-06-01T00:00:00.000000Z');
    const every = await workflowWith(
      t,
      'Every 90 s',
      { nodes: [node('tick', 'schedule', { interval_ms: 90_000 })], edges: [] },
      { activate: true },
    );
    const hourly = await workflowWith(
      t,
      'Hourly',
      { nodes: [node('tick', 'schedule', { cron: '0 * * * *' })], edges: [] },
      { activate: true },
    );

    await db.schema.alterTable('schedules').renameColumn('interval_ms', 'interval_seconds').execute();
    if (dialect === 'postgres')
      await db.schema
        .alterTable('schedules')
        .alterColumn('interval_seconds', (c) => c.setDataType('integer'))
        .execute();
    await sql`update schedules set interval_seconds = interval_seconds / 1000 where interval_seconds is not null`.execute(db);
    await migration0015(db as never, t.deps.dialect);

    const intervalOf = async (workflowId: string) => {
      const row = await db.selectFrom('schedules').select('interval_ms').where('workflow_id', '=', workflowId).executeTakeFirstOrThrow();
      return row.interval_ms === null ? null : Number(row.interval_ms);
    };
    expect(await intervalOf(every)).toBe(90_000);
    expect(await intervalOf(hourly)).toBeNull();
    await db.updateTable('schedules').set({ interval_ms: 31_536_000_000 }).where('workflow_id', '=', every).execute();
    expect(await intervalOf(every)).toBe(31_536_000_000);
  });
});
