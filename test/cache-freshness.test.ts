import SQLite from 'better-sqlite3';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EXTERNAL_PROBE_INTERVAL_MS } from '../src/db/dialect/throttled-probe.js';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Token look-ups and list answers are cached in the process, on both dialects (SQLite: its change
 * probe; PostgreSQL: the database's write announcements). These scenarios write through the app
 * and through a second connection, as the CLI does, and require every answer to reflect the
 * write: at once for the app's own writes and, for another connection's, within the probe's 1 ms
 * on SQLite and on the next request on PostgreSQL (test/shared-state*.test.ts prove the
 * PostgreSQL caches are on).
 */
describeEachDialect('cached reads stay fresh', (dialect) => {
  let t: TestApp;
  let runOutside: (statement: string, params: unknown[]) => Promise<void>;
  let closeOutside: () => Promise<void>;
  beforeAll(async () => {
    t = await createTestApp(dialect, { sqliteFile: true });
    const url = t.database.url!;
    if (dialect === 'sqlite') {
      const other = new SQLite(url);
      // The app asks SQLite about other connections' commits at most once a millisecond: a write
      // from outside shows once that interval has passed (docs/architecture.md).
      runOutside = async (statement, params) => {
        other.prepare(statement.replace(/\$\d+/g, '?')).run(...params);
        await sleep(EXTERNAL_PROBE_INTERVAL_MS + 1);
      };
      closeOutside = async () => {
        other.close();
      };
    } else {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      runOutside = async (statement, params) => void (await client.query(statement, params));
      closeOutside = () => client.end();
    }
  });
  afterAll(async () => {
    await closeOutside();
    await t.close();
  });

  it('a token revoked by another process is refused on the next request', async () => {
    const created = await t.deps.identity.createToken({ workspaceSlug: 'main', scope: 'build' });
    for (let i = 0; i < 3; i += 1) expect((await t.request('GET', '/api/v1/me', { token: created.token })).status).toBe(200);
    await runOutside('UPDATE api_tokens SET revoked_at = $1 WHERE id = $2', ['2026-11-01T00:00:00.000000Z', created.id]);
    expect((await t.request('GET', '/api/v1/me', { token: created.token })).status).toBe(401);
  });

  it('a plan downgrade by another process applies on the next request', async () => {
    const ws = await t.deps.identity.createWorkspace({ name: 'Downgraded', slug: 'downgraded', plan: 'pro' });
    const token = (await t.deps.identity.createToken({ workspaceSlug: 'downgraded', scope: 'build' })).token;
    // Twice: the first request also records the token's last use, which is itself a write.
    for (let i = 0; i < 2; i += 1) expect((await t.request('GET', '/api/v1/workflows', { token })).status).toBe(200);
    await runOutside('UPDATE workspaces SET plan = $1 WHERE id = $2', ['free', ws.id]);
    expect((await t.request('GET', '/api/v1/workflows', { token })).status).toBe(403);
  });

  it('a list reflects writes through the API and through another connection at once', async () => {
    const list = async () =>
      (await t.request('GET', '/api/v1/workflows?sort=name')).body.data.map((w: { attributes: { name: string } }) => w.attributes.name);
    const before = await list();
    expect(await list()).toEqual(before);
    const created = (await t.request('POST', '/api/v1/workflows', { body: { data: { name: 'Cached A' } } })).body.data.id;
    expect(await list()).toEqual([...before, 'Cached A'].sort());
    await t.request('PATCH', `/api/v1/workflows/${created}`, {
      body: { data: { type: 'workflow', id: created, attributes: { name: 'Cached B' } } },
    });
    expect(await list()).toContain('Cached B');
    await runOutside('UPDATE workflows SET name = $1 WHERE id = $2', ['Renamed outside', created]);
    expect(await list()).toContain('Renamed outside');
    await runOutside('DELETE FROM workflows WHERE id = $1', [created]);
    expect(await list()).toEqual(before);
  });

  it('a token revoked through the app is refused on the next request', async () => {
    const created = await t.deps.identity.createToken({ workspaceSlug: 'main', scope: 'read' });
    expect((await t.request('GET', '/api/v1/workflows', { token: created.token })).status).toBe(200);
    await t.deps.identity.revokeToken(created.id);
    expect((await t.request('GET', '/api/v1/workflows', { token: created.token })).status).toBe(401);
  });
});
