import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite } from './sqlite.js';

describe('SQLite WAL checkpointer', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('copies committed pages into the database file from its own thread, without the serving connection checkpointing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-ckpt-'));
    dirs.push(dir);
    const file = path.join(dir, 'db.sqlite');
    const handle = openSqlite(file);
    await sql`create table t (id integer primary key, body text)`.execute(handle.db);
    const before = fs.statSync(file).size;
    // About 2 MB: far below the serving connection's own auto-checkpoint threshold (~80 MB).
    for (let i = 0; i < 200; i++) await sql`insert into t (body) values (${'x'.repeat(10_000)})`.execute(handle.db);
    let size = fs.statSync(file).size;
    for (let i = 0; i < 100 && size < before + 1_000_000; i++) {
      await sleep(20);
      size = fs.statSync(file).size;
    }
    expect(size).toBeGreaterThan(before + 1_000_000);
    await handle.close();
  });
});
