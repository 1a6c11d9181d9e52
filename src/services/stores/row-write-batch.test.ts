import type { Kysely, Transaction } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../errors/app-error.js';
import { RowWriteBatch } from './row-write-batch.js';

/** A database whose transactions record what their writes wrote, kept only when they commit. */
function fakeDatabase() {
  const committed: string[][] = [];
  let open = 0;
  const db = {
    transaction: () => ({
      execute: async <T>(run: (trx: Transaction<Database>) => Promise<T>): Promise<T> => {
        const written: string[] = [];
        open += 1;
        try {
          const value = await run(written as unknown as Transaction<Database>);
          committed.push(written);
          return value;
        } finally {
          open -= 1;
        }
      },
    }),
  };
  return { db: db as unknown as Kysely<Database>, committed, open: () => open };
}

const writing =
  (name: string) =>
  async (trx: Transaction<Database>): Promise<string> => {
    (trx as unknown as string[]).push(name);
    return name;
  };

describe('row write batch', () => {
  it('commits the writes of one tick in one transaction, in arrival order, and settles them after the commit', async () => {
    const { db, committed } = fakeDatabase();
    const batch = new RowWriteBatch(db);
    const answers = await Promise.all(['a', 'b', 'c'].map((name) => batch.write(writing(name))));
    expect(answers).toEqual(['a', 'b', 'c']);
    expect(committed).toEqual([['a', 'b', 'c']]);
  });

  it('refuses a write that throws an AppError alone; the others of its batch commit', async () => {
    const { db, committed } = fakeDatabase();
    const batch = new RowWriteBatch(db);
    const refused = batch.write(async () => {
      throw new AppError('row_exists', 'a row with key "b" already exists in this store');
    });
    const results = await Promise.allSettled([batch.write(writing('a')), refused, batch.write(writing('c'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(committed).toEqual([['a', 'c']]);
  });

  it('runs the writes again one transaction each when the batch fails with another error', async () => {
    const { db, committed } = fakeDatabase();
    const batch = new RowWriteBatch(db);
    const failure = new Error('disk I/O error');
    const results = await Promise.allSettled([
      batch.write(writing('a')),
      batch.write(async () => {
        throw failure;
      }),
      batch.write(writing('c')),
    ]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 'a' },
      { status: 'rejected', reason: failure },
      { status: 'fulfilled', value: 'c' },
    ]);
    expect(committed).toEqual([['a'], ['c']]);
  });

  it('starts a new batch for writes queued while one commits', async () => {
    const { db, committed } = fakeDatabase();
    const batch = new RowWriteBatch(db);
    const first = batch.write(writing('a'));
    await first;
    await batch.write(writing('b'));
    expect(committed).toEqual([['a'], ['b']]);
  });
});
