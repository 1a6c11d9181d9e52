import type { Kysely } from 'kysely';
import type { Database, UsersTable } from '../db/schema.js';

export type UserRow = UsersTable;

export async function insertUser(db: Kysely<Database>, row: UserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export async function findUserByEmail(db: Kysely<Database>, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findUser(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
