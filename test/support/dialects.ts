import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe } from 'vitest';
import { randomBase62 } from '../../src/lib/secrets.js';
import type { DatabaseHandle, DialectName } from '../../src/db/dialect/dialect.js';
import { openPostgres } from '../../src/db/dialect/postgres.js';
import { openSqlite } from '../../src/db/dialect/sqlite.js';
import { migrateOrThrow } from '../../src/db/migrate.js';

/**
 * The suite runs once per dialect, Kysely-style. SQLite always runs; PostgreSQL joins when
 * SWITCHYARD_TEST_DATABASE_URL names a server (a maintenance database such as
 * postgres://postgres@127.0.0.1:5432/postgres): each suite gets a fresh database there.
 */
export const TEST_DATABASE_URL = process.env.SWITCHYARD_TEST_DATABASE_URL || null;
export const DIALECTS: DialectName[] = TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase extends DatabaseHandle {
  dialectName: DialectName;
  /** The URL of a PostgreSQL test database, or the file of a file-backed SQLite one (else null). */
  url: string | null;
}

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL! });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database: in-memory SQLite, or a new PostgreSQL database dropped on close. */
export async function createTestDatabase(
  dialect: DialectName,
  options: { migrate?: boolean; sqliteFile?: boolean } = {},
): Promise<TestDatabase> {
  let handle: DatabaseHandle;
  let url: string | null = null;
  if (dialect === 'sqlite' && options.sqliteFile) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sy-db-'));
    url = path.join(dir, 'switchyard.db');
    const inner = openSqlite(url);
    handle = {
      ...inner,
      close: async () => {
        await inner.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } else if (dialect === 'sqlite') {
    handle = openSqlite(':memory:');
  } else {
    const name = `sy_test_${randomBase62(10).toLowerCase()}`;
    await adminQuery(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
    url = databaseUrl(TEST_DATABASE_URL!, name);
    const inner = openPostgres(url, { max: 5 });
    handle = {
      ...inner,
      close: async () => {
        await inner.close();
        await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    };
  }
  if (options.migrate !== false) await migrateOrThrow(handle);
  return { ...handle, dialectName: dialect, url };
}

/** `describe` once per dialect, with the dialect's name in the suite title. */
export function describeEachDialect(title: string, body: (dialect: DialectName) => void): void {
  for (const dialect of DIALECTS) describe(`${title} [${dialect}]`, () => body(dialect));
}
