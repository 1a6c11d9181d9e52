import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../../../test/support/dialects.js';
import type { Database } from '../schema.js';
import type { DatabaseHandle } from './dialect.js';
import { openPostgres } from './postgres.js';
import { preparingPool, StatementNames, type PlanRefresh } from './prepared-statements.js';

describe('StatementNames', () => {
  it('names a text from its second use, and keeps that name', () => {
    const names = new StatementNames();
    expect(names.nameOf('select $1')).toBeUndefined();
    const name = names.nameOf('select $1');
    expect(name).toMatch(/^sy_\d+$/);
    expect(names.nameOf('select $1')).toBe(name);
    expect(names.size).toBe(1);
  });

  it('gives different texts different names', () => {
    const names = new StatementNames();
    for (const text of ['a $1', 'b $1', 'a $1', 'b $1']) names.nameOf(text);
    expect(names.nameOf('a $1')).not.toBe(names.nameOf('b $1'));
    expect(names.size).toBe(2);
  });

  it('drops every name when a new text would pass its cap, and names the texts in use afresh', () => {
    const names = new StatementNames(2);
    for (const text of ['a', 'a', 'b', 'b']) names.nameOf(text);
    const [a, b] = [names.nameOf('a'), names.nameOf('b')];
    expect(names.generation).toBe(0);
    expect(names.nameOf('c')).toBeUndefined();
    const c = names.nameOf('c');
    expect(c).toBeDefined();
    expect(names.generation).toBe(1);
    expect(names.size).toBe(1);
    // `a` starts over: unnamed once, then a name never given before.
    expect(names.nameOf('a')).toBeUndefined();
    expect(names.nameOf('a')).toBeDefined();
    expect(new Set([a, b, c, names.nameOf('a')]).size).toBe(4);
  });

  it('forgets the texts seen once when there are too many of them', () => {
    const names = new StatementNames(256, 3);
    names.nameOf('kept?');
    for (const text of ['x', 'y', 'z']) names.nameOf(text);
    // The set was full when `z` came: it was cleared, so `kept?` counts as new again.
    expect(names.nameOf('kept?')).toBeUndefined();
    expect(names.nameOf('kept?')).toBeDefined();
  });
});

describe.skipIf(!TEST_DATABASE_URL)('prepared statements on PostgreSQL [postgres]', () => {
  let database: TestDatabase;
  /** One connection, so every query below runs on the same session. */
  let single: DatabaseHandle;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    single = openPostgres(database.url!, { max: 1 });
  });
  afterAll(async () => {
    await single?.close();
    await database?.close();
  });

  const prepared = async () =>
    (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(single.db)).rows;

  it('sends a repeated text with parameters as one named statement, with the right answers', async () => {
    const answers: number[] = [];
    for (const n of [1, 2, 3, 4]) answers.push((await sql<{ n: number }>`select ${n}::integer + 1 as n`.execute(single.db)).rows[0]!.n);
    expect(answers).toEqual([2, 3, 4, 5]);
    const statements = await prepared();
    const mine = statements.filter((row) => row.statement.includes('::integer + 1 as n'));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.name).toMatch(/^sy_\d+$/);
  });

  it('leaves queries without parameters unnamed', async () => {
    for (let i = 0; i < 3; i += 1) await sql`select 41 + 1 as n`.execute(single.db);
    expect((await prepared()).filter((row) => row.statement.includes('41 + 1'))).toEqual([]);
  });

  it('keeps answering after a named text fails to parse, and inside transactions that roll back', async () => {
    for (let i = 0; i < 3; i += 1) await expect(sql`selec ${i}::integer`.execute(single.db)).rejects.toThrow(/syntax error/);
    await expect(
      single.db.transaction().execute(async (trx) => {
        for (const n of [5, 6, 7]) expect((await sql<{ n: number }>`select ${n}::integer * 2 as n`.execute(trx)).rows[0]!.n).toBe(n * 2);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await sql<{ n: number }>`select ${8}::integer * 2 as n`.execute(single.db)).rows[0]!.n).toBe(16);
  });

  it('sends a text again unnamed when a column change made its prepared plan stale, and names it afresh', async () => {
    await sql`create table stale_probe (id integer primary key)`.execute(single.db);
    await sql`insert into stale_probe values (1)`.execute(single.db);
    const read = (db: Kysely<Database> = single.db) => sql<Record<string, unknown>>`select * from stale_probe where id = ${1}`.execute(db);
    for (let i = 0; i < 3; i += 1) expect((await read()).rows).toEqual([{ id: 1 }]);
    const before = (await prepared()).find((row) => row.statement.includes('from stale_probe'))!.name;
    await sql`alter table stale_probe add column note text default 'x'`.execute(single.db);
    // Outside a transaction: sent again unnamed, with the new columns.
    expect((await read()).rows).toEqual([{ id: 1, note: 'x' }]);
    for (let i = 0; i < 2; i += 1) expect((await read()).rows).toEqual([{ id: 1, note: 'x' }]);
    const names = (await prepared()).filter((row) => row.statement.includes('from stale_probe')).map((row) => row.name);
    expect(names).toHaveLength(2);
    expect(names.filter((name) => name !== before)).toHaveLength(1);

    // Inside a transaction the statement fails (the transaction is lost) once; the next one runs.
    await sql`alter table stale_probe add column other text default 'y'`.execute(single.db);
    await expect(single.db.transaction().execute((trx) => read(trx))).rejects.toThrow(/cached plan must not change result type/);
    expect((await single.db.transaction().execute((trx) => read(trx))).rows).toEqual([{ id: 1, note: 'x', other: 'y' }]);
  });

  it("deallocates a connection's statements when the names start a new generation", async () => {
    const pool = new pg.Pool({ connectionString: database.url!, max: 1 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool, new StatementNames(2)) }) });
    try {
      const ask = (n: number) => sql<{ n: number }>`select ${n}::integer + ${n}::integer as n`.execute(db);
      const statements = async () =>
        (await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db)).rows.map((row) => row.name);
      for (const n of [1, 2]) await sql`select ${n}::integer as one`.execute(db);
      for (const n of [1, 2]) await sql`select ${n}::integer as two`.execute(db);
      expect(await statements()).toHaveLength(2);
      // A third repeated text starts a new generation: the next query first deallocates the two.
      for (const n of [1, 2]) expect((await ask(n)).rows[0]!.n).toBe(2 * n);
      expect((await ask(3)).rows[0]!.n).toBe(6);
      expect(await statements()).toHaveLength(1);
      // The old texts still answer (named afresh from their next two uses).
      for (const n of [3, 4, 5]) expect((await sql<{ one: number }>`select ${n}::integer as one`.execute(db)).rows[0]!.one).toBe(n);
      expect(await statements()).toHaveLength(2);
    } finally {
      await db.destroy();
    }
  });

  it("drops a connection's cached plans 1 s after it opens, then after twice as long each time, up to the cap, never inside a transaction", async () => {
    const pool = new pg.Pool({ connectionString: database.url!, max: 1 });
    // Every text the connection is sent, in order.
    const sent: string[] = [];
    const seen = new WeakSet<pg.PoolClient>();
    const recording = {
      connect: async () => {
        const client = await pool.connect();
        if (!seen.has(client)) {
          seen.add(client);
          const query = client.query.bind(client) as (...args: unknown[]) => unknown;
          (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
            sent.push(typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text);
            return query(...args);
          };
        }
        return client;
      },
      end: () => pool.end(),
    } as unknown as pg.Pool;
    let now = 0;
    const refresh: PlanRefresh = { firstMs: 1000, maxMs: 4000, now: () => now };
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(recording, new StatementNames(), refresh) }) });
    try {
      const ask = async (n: number) => expect((await sql<{ n: number }>`select ${n}::integer * 3 as n`.execute(db)).rows[0]!.n).toBe(3 * n);
      const discards = () => sent.filter((text) => text === 'discard plans').length;
      await ask(1);
      await ask(2);
      expect(discards()).toBe(0);
      // Due at 1 s, then 3 s (1 + 2), 7 s (3 + 4), and every 4 s after that.
      for (const [at, expected] of [
        [999, 0],
        [1000, 1],
        [2999, 1],
        [3000, 2],
        [6999, 2],
        [7000, 3],
        [10_999, 3],
        [11_000, 4],
      ] as const) {
        now = at;
        await ask(at);
        expect(discards(), `at ${at} ms`).toBe(expected);
      }
      // Due inside a transaction, the drop waits for the end of it.
      await db.transaction().execute(async (trx) => {
        now = 15_000;
        expect((await sql<{ n: number }>`select ${4}::integer * 3 as n`.execute(trx)).rows[0]!.n).toBe(12);
      });
      expect(discards()).toBe(4);
      await ask(5);
      expect(discards()).toBe(5);
      // It comes just before a query, which answers from its statement, still prepared under its name.
      const last = sent.lastIndexOf('discard plans');
      expect(sent[last + 1]).toContain('::integer * 3 as n');
      expect(
        (
          await sql<{
            n: number;
          }>`select count(*)::integer as n from pg_prepared_statements where statement like ${'%::integer * 3 as n'}`.execute(db)
        ).rows[0]!.n,
      ).toBe(1);
    } finally {
      await db.destroy();
    }
  });

  it("makes a cached plan again after the drop, as PostgreSQL would after the table's statistics changed", async () => {
    const pool = new pg.Pool({ connectionString: database.url!, max: 1 });
    let now = 0;
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: preparingPool(pool, new StatementNames(), { firstMs: 1000, maxMs: 60_000, now: () => now }) }),
    });
    try {
      await sql`create table plan_probe (id integer primary key, n integer)`.execute(db);
      await sql`create index plan_probe_n on plan_probe (n)`.execute(db);
      await sql`insert into plan_probe values (1, 1)`.execute(db);
      await sql`set plan_cache_mode = force_generic_plan`.execute(db);
      await sql`set enable_indexscan = off`.execute(db);
      await sql`set enable_bitmapscan = off`.execute(db);
      for (let i = 0; i < 3; i += 1) await sql`select id from plan_probe where n > ${i}`.execute(db);
      const name = (
        await sql<{ name: string }>`select name from pg_prepared_statements where statement like ${'%from plan_probe where n >%'}`.execute(
          db,
        )
      ).rows[0]!.name;
      const plan = async () =>
        (await sql<{ 'QUERY PLAN': string }>`explain execute ${sql.raw(name)}(0)`.execute(db)).rows
          .map((row) => row['QUERY PLAN'])
          .join('\n');
      // Planned while index scans were off: the generic plan reads the table whole.
      expect(await plan()).toMatch(/Seq Scan on plan_probe/);
      // Settings are no table change: the cached plan stays as it was made...
      await sql`set enable_indexscan = on`.execute(db);
      await sql`set enable_bitmapscan = on`.execute(db);
      await sql`set enable_seqscan = off`.execute(db);
      expect(await plan()).toMatch(/Seq Scan on plan_probe/);
      // ...until the connection drops it: the next plan is made with what holds now.
      now = 1000;
      expect(await plan()).toMatch(/Index (Only )?Scan using plan_probe_n|Bitmap Index Scan on plan_probe_n/);
    } finally {
      await sql`drop table if exists plan_probe`.execute(db);
      await db.destroy();
    }
  });

  it('plans the claim function generically (migration 0018)', async () => {
    const row = (
      await sql<{ config: string[] | null }>`select proconfig as config from pg_proc where proname = 'sy_claim_executions'`.execute(
        database.db,
      )
    ).rows[0];
    expect(row?.config).toContain('plan_cache_mode=force_generic_plan');
  });

  it("plans the cluster's functions without bitmap scans (which never mark dead index entries) or sequential scans (migration 0020)", async () => {
    const rows = (
      await sql<{
        name: string;
        config: string[] | null;
      }>`select proname as name, proconfig as config from pg_proc where proname in ('sy_claim_executions', 'sy_admit_handing_off') order by proname`.execute(
        database.db,
      )
    ).rows;
    expect(rows.map((row) => row.name)).toEqual(['sy_admit_handing_off', 'sy_claim_executions']);
    for (const row of rows)
      expect(row.config, row.name).toEqual(
        expect.arrayContaining(['plan_cache_mode=force_generic_plan', 'enable_bitmapscan=off', 'enable_seqscan=off']),
      );
  });
});
