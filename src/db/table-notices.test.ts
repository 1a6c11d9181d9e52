import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../../test/support/dialects.js';
import { startDataStamp, type DataStamp } from './data-stamp.js';
import { TABLES_CHANNEL } from './table-notices.js';

const NOW = '2026-11-01T00:00:00.000000Z';

describe.skipIf(!TEST_DATABASE_URL)('write announcements and the stamp [postgres]', () => {
  let database: TestDatabase;
  let stamp: DataStamp;
  const heard: string[] = [];
  const stampOf = async (tables: string[]) => stamp(tables);

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    stamp = (await startDataStamp(database))!;
    await database.notifier!.listen(TABLES_CHANNEL, (table) => heard.push(table));
    await sql`insert into users (id, email, name, created_at, updated_at) values ('u1', 'a@example.test', 'A', ${NOW}, ${NOW})`.execute(
      database.db,
    );
    await sql`insert into workspaces (id, name, slug, plan, owner_user_id, created_at, updated_at) values ('w1', 'W', 'w', 'pro', 'u1', ${NOW}, ${NOW})`.execute(
      database.db,
    );
    await sql`insert into api_tokens (id, workspace_id, user_id, name, token_prefix, token_hash, scope, created_at) values ('t1', 'w1', 'u1', 'T', 'sy_x', 'h', 'build', ${NOW})`.execute(
      database.db,
    );
  });
  afterAll(() => database.close());

  /** What arrives on the channel for a statement run on another connection (raw SQL: not counted by this process). */
  async function announcedBy(statement: ReturnType<typeof sql>): Promise<string[]> {
    await database.notifier!.sync();
    heard.length = 0;
    await statement.execute(database.db);
    await database.notifier!.sync();
    return [...heard];
  }

  it('announces every write to a cached table at commit, once a table a transaction, and never a rollback', async () => {
    expect(await announcedBy(sql`update workspaces set name = 'W2' where id = 'w1'`)).toEqual(['workspaces']);
    expect(await announcedBy(sql`update workspaces set name = 'none' where id = 'nobody'`)).toEqual(['workspaces']);
    heard.length = 0;
    await database.db.transaction().execute(async (trx) => {
      await sql`update users set name = 'B' where id = 'u1'`.execute(trx);
      await sql`update users set name = 'C' where id = 'u1'`.execute(trx);
      await sql`update workspaces set name = 'W3' where id = 'w1'`.execute(trx);
    });
    await database.notifier!.sync();
    expect(heard.sort()).toEqual(['users', 'workspaces']);
    heard.length = 0;
    await database.db
      .transaction()
      .execute(async (trx) => {
        await sql`update users set name = 'D' where id = 'u1'`.execute(trx);
        throw new Error('roll back');
      })
      .catch(() => {});
    await database.notifier!.sync();
    expect(heard).toEqual([]);
  });

  it('does not announce a token being used (last_used_at), which no cache reads, nor writes to the engine tables', async () => {
    expect(await announcedBy(sql`update api_tokens set last_used_at = ${NOW} where id = 't1'`)).toEqual([]);
    expect(await announcedBy(sql`update api_tokens set revoked_at = ${NOW} where id = 't1'`)).toEqual(['api_tokens']);
    expect(await announcedBy(sql`delete from executions where id = 'none'`)).toEqual([]);
    expect(await announcedBy(sql`delete from execution_steps where id = 'none'`)).toEqual([]);
  });

  it('changes the stamp of the written table on the next call, and no other table’s', async () => {
    const before = { workflows: await stampOf(['workflows']), tokens: await stampOf(['api_tokens', 'workspaces', 'users']) };
    expect(before.workflows).not.toBeNull();
    expect(await stampOf(['workflows'])).toBe(before.workflows);
    await sql`update workflows set name = 'x' where id = 'none'`.execute(database.db);
    expect(await stampOf(['workflows'])).not.toBe(before.workflows);
    expect(await stampOf(['api_tokens', 'workspaces', 'users'])).toBe(before.tokens);
  });

  it('has no stamp for tables the database does not announce: nothing read from them is cached', async () => {
    expect(await stampOf(['executions'])).toBeNull();
    expect(await stampOf(['execution_steps', 'executions'])).toBeNull();
    expect(await stampOf(['executions', 'workflows'])).toBeNull();
  });

  it('changes every stamp when the listening connection is lost, and has none until it is back', async () => {
    const before = await stampOf(['workflows']);
    let back = false;
    database.notifier!.onReconnect(() => (back = true));
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and (query like 'LISTEN%' or query = 'select 1')`.execute(
      database.db,
    );
    const during: (string | null)[] = [];
    for (let i = 0; i < 200 && !back; i += 1) {
      during.push(await stampOf(['workflows']));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(back).toBe(true);
    // Every stamp taken from the loss on was none, or already a new one; none served old entries.
    expect(during.filter((current) => current === before)).toEqual([]);
    // Nothing was written meanwhile, yet the stamp changed: messages may have been missed.
    const after = await stampOf(['workflows']);
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
  });
});
