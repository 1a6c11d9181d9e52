import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../../test/support/dialects.js';
import { MAX_NOTIFY_PAYLOAD, PgNotifier, PRESENCE_LOCK_CLASS, type Notifier } from './notifier.js';

/** Resolves with the next payload on `channel`, or rejects after `ms`. */
function nextMessage(notifier: Notifier, channel: string, ms = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no message on ${channel} within ${ms} ms`)), ms);
    void notifier.listen(channel, (payload) => {
      clearTimeout(timer);
      resolve(payload);
    });
  });
}

describe.skipIf(!TEST_DATABASE_URL)('PgNotifier [postgres]', () => {
  let database: TestDatabase;
  let notifier: Notifier;
  beforeAll(async () => {
    database = await createTestDatabase('postgres', { migrate: false });
    notifier = database.notifier!;
  });
  afterAll(() => database.close());

  it('delivers a message sent in a transaction only when it commits', async () => {
    const received: string[] = [];
    await notifier.listen('sy_test_commit', (payload) => received.push(payload));
    const committed = nextMessage(notifier, 'sy_test_commit');
    await database.db
      .transaction()
      .execute(async (trx) => {
        await notifier.notify(trx, 'sy_test_commit', 'rolled back');
        throw new Error('roll back');
      })
      .catch(() => {});
    await database.db.transaction().execute((trx) => notifier.notify(trx, 'sy_test_commit', 'committed'));
    expect(await committed).toBe('committed');
    expect(received).toEqual(['committed']);
  });

  it('listens again after its connection is killed, and says so', async () => {
    let reconnects = 0;
    notifier.onReconnect(() => (reconnects += 1));
    await notifier.listen('sy_test_reconnect', () => {});
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'LISTEN%'`.execute(
      database.db,
    );
    for (let i = 0; i < 100 && reconnects === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reconnects).toBe(1);
    const again = nextMessage(notifier, 'sy_test_reconnect');
    await notifier.notify(database.db, 'sy_test_reconnect', 'after');
    expect(await again).toBe('after');
  });

  /** The pid of the session holding the presence lock of `name`, if any (as the hand-off asks: pg_locks only to say who). */
  const presenceHolder = async (name: string): Promise<number | null> => {
    const { rows } = await sql<{
      pid: number;
    }>`select pid from pg_locks where locktype = 'advisory' and classid = ${PRESENCE_LOCK_CLASS} and objid = hashtext(${name})::oid and objsubid = 2 and mode = 'ExclusiveLock' and granted`.execute(
      database.db,
    );
    return rows[0]?.pid ?? null;
  };
  /** Whether an admission would count `name` live: its shared request without waiting is refused. */
  const seenLive = async (name: string): Promise<boolean> => {
    const { rows } = await sql<{
      free: boolean;
    }>`select pg_try_advisory_xact_lock_shared(${PRESENCE_LOCK_CLASS}, hashtext(${name})) as free`.execute(database.db);
    return !rows[0]!.free;
  };

  it('names its listening connection and holds its presence lock, again after the connection is killed and made anew', async () => {
    const named = async () =>
      (
        await sql<{
          pid: number;
        }>`select pid from pg_stat_activity where datname = current_database() and application_name = 'sy_worker_test'`.execute(database.db)
      ).rows;
    expect(await seenLive('sy_worker_test')).toBe(false);
    await notifier.listen('sy_test_named', () => {});
    await notifier.identify('sy_worker_test');
    const [first] = await named();
    expect(first).toBeDefined();
    expect(await presenceHolder('sy_worker_test')).toBe(first!.pid);
    expect(await seenLive('sy_worker_test')).toBe(true);
    let reconnects = 0;
    notifier.onReconnect(() => (reconnects += 1));
    await sql`select pg_terminate_backend(${first!.pid})`.execute(database.db);
    for (let i = 0; i < 100 && reconnects === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    const again = await named();
    expect(again).toHaveLength(1);
    expect(again[0]!.pid).not.toBe(first!.pid);
    expect(await presenceHolder('sy_worker_test')).toBe(again[0]!.pid);
    expect(await seenLive('sy_worker_test')).toBe(true);
    await expect(notifier.identify("x'; drop table y; --")).rejects.toThrow('not a valid connection name');
  });

  it('takes its presence lock once another connection of the same name lets it go, and drops it when closed', async () => {
    const older = new PgNotifier(database.url!);
    const newer = new PgNotifier(database.url!);
    try {
      await older.listen('sy_test_presence', () => {});
      await older.identify('sy_worker_twice');
      const olderPid = await presenceHolder('sy_worker_twice');
      expect(olderPid).not.toBeNull();
      // The newer connection waits a moment, is refused, and asks again each second.
      await newer.listen('sy_test_presence', () => {});
      await newer.identify('sy_worker_twice');
      expect(await presenceHolder('sy_worker_twice')).toBe(olderPid);
      await older.close();
      let holder: number | null = null;
      for (let i = 0; i < 60 && (holder === null || holder === olderPid); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        holder = await presenceHolder('sy_worker_twice');
      }
      expect(holder).not.toBeNull();
      expect(holder).not.toBe(olderPid);
      expect(await seenLive('sy_worker_twice')).toBe(true);
    } finally {
      await older.close();
      await newer.close();
    }
    for (let i = 0; i < 40 && (await presenceHolder('sy_worker_twice')) !== null; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await seenLive('sy_worker_twice')).toBe(false);
  });

  it('sync resolves only after every message committed before it has reached its handler', async () => {
    const received: string[] = [];
    await notifier.listen('sy_test_sync', (payload) => received.push(payload));
    // Another connection of the pool commits, then sync: no waiting between the two, every time.
    for (let i = 0; i < 200; i += 1) {
      await notifier.notify(database.db, 'sy_test_sync', String(i));
      expect(await notifier.sync()).toBe(true);
      expect(received.at(-1)).toBe(String(i));
    }
    // Callers arriving together share round trips, and each still sees what committed before it.
    const sent = Array.from({ length: 20 }, (_, i) => `together-${i}`);
    await Promise.all(
      sent.map(async (payload) => {
        await notifier.notify(database.db, 'sy_test_sync', payload);
        expect(await notifier.sync()).toBe(true);
        expect(received).toContain(payload);
      }),
    );
  });

  it('says so when its connection is lost, and sync answers false until it is back', async () => {
    let lost = 0;
    let reconnects = 0;
    notifier.onLost(() => (lost += 1));
    notifier.onReconnect(() => (reconnects += 1));
    await notifier.listen('sy_test_lost', () => {});
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and (query like 'LISTEN%' or query = 'select 1')`.execute(
      database.db,
    );
    for (let i = 0; i < 100 && lost === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lost).toBe(1);
    if (reconnects === 0) expect(await notifier.sync()).toBe(false);
    for (let i = 0; i < 100 && reconnects === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reconnects).toBe(1);
    expect(await notifier.sync()).toBe(true);
  });

  it('refuses payloads PostgreSQL would refuse, and channel names that are not identifiers', async () => {
    await expect(notifier.notify(database.db, 'sy_test_big', 'x'.repeat(MAX_NOTIFY_PAYLOAD + 1))).rejects.toThrow(/exceeds/);
    await expect(notifier.notify(database.db, 'Robert"); drop table x; --', 'x')).rejects.toThrow(/not a valid notification channel/);
  });
});
